call c1
end
