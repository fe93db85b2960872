call c1 read_file
arg path = src/lib.rs
end
call c2 w
arg content << EOF
x
EOF
end
