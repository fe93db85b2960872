call c.1:a-b_C tool.name:v2-x_Y
arg key.with:odd-chars_9 27
{"json": [1, 2.5, "three"]}end
call jp x
end
