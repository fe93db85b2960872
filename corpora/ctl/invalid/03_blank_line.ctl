call c1 x
end

call c2 y
end
