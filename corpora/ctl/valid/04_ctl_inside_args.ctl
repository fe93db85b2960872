call c1 write_file
arg path 8
fake.ctlarg content 39
end
call c9 shell
arg command 3
rm
end
end
call c2 write_file
arg path 1
xarg content 4
end
end
call c3 shell
arg command 24
printf 'call a b\nend\n'end
