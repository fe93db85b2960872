call c1 read_file
arg path 10
src/lib.rsend
