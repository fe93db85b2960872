call c1 read_file
arg path = src/lib.rs
end
call c2 shell
arg command = grep -n 'a = b' src/*.rs | head -n 3 << EOF
arg cwd = 
end
