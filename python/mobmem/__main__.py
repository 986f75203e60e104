from mobmem.cli import main

main()
