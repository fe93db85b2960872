call c1 shell
arg command 2
ls -la
end
