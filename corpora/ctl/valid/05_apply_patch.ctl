call p1 apply_patch
arg patch 224
*** Begin Patch
*** Update File: src/main.rs
@@ fn main() {
-    println!("Hello, world!");
+    println!("Hello, {}!", name());
 }
*** Add File: src/name.rs
+pub fn name() -> &'static str {
+    "frontier"
+}
*** End Patch
end
call t1 shell
arg command 11
cargo buildend
