call c1 write_file
arg path = notes/todo.md
arg content <<EOF
# TODO

EOFX
EOF 
EOF
 EOF
EO
- [ ] ship it
EOF
end
call c2 write_file
arg path = empty.txt
arg content <<EOF
EOF
end
