call c1 apply_patch
arg patch <<PATCH
*** Begin Patch
*** Update File: src/a.rs
@@
-old
+new
*** End Patch
PATCH
arg note 4
abcdarg mode = strict
end
call c2 shell
arg command = cargo test
end
