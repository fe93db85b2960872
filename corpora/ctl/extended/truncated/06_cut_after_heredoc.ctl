call c1 read_file
arg path = src/lib.rs
end
call c2 write_file
arg content <<EOF
x
EOF
