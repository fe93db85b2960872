call c1 write_file
arg content 999999999999
