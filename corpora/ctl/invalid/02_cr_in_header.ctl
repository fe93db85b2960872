call c1 read_file
end
