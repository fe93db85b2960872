call u1 write_file
arg path 11
unicode.txtarg content 58
héllo — wörld 🚀
„quotes“ «guillemets» 中文
end
