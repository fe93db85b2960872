call c1 read_file
arg path 10
src/lib.rsend
call c2 list_dir
arg path 1
.end
call c3 write_file
arg path 13
notes/todo.mdarg content 47
# TODO

- [ ] ship the parser
- [ ] measure it
end
call c4 shell
arg command 36
cargo test --quiet 2>&1 | tail -n 20end
call c5 shell
arg command 13
rm -rf build/