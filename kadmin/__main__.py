from kadmin.cli.app import main

main()
