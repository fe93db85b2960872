call c1 write_file
arg path = notes.md
arg content <<abc
abc is not the tag line
ab
abcd

abc
arg note <<Xa
X
Xb
aXa
Xa
end
