call c1 write_file
arg content 007
abcdefg
end
