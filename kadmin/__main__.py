from kadmin.entry import main

main()
