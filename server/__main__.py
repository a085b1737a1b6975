from server.cli.main import main

main()
