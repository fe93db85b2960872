call c1 list_dir
end
call c2 write_file
arg path 9
empty.txtarg content 0
end
call c3 noop
arg a 0
arg b 0
arg c 0
end
