call c1 write_file
arg path = a.ctl
arg content <<end
call c9 x
arg k 0
endx
end
end
