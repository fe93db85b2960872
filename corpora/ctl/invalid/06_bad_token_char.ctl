call c1 read/file
end
