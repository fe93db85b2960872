#[path = "apply_patch_support/codex_ref.rs"]
mod codex_ref;
#[path = "apply_patch_support/gen.rs"]
mod gen;
#[test]
#[ignore]
fn probe() {
    let mut rng = gen::Rng(0x51f15e3b);
    for case in 0..632 {
        let text = if rng.chance(50) {
            gen::codex_text(&mut rng)
        } else {
            gen::valid_patch(&mut rng, false)
        };
        let text = if rng.chance(40) {
            gen::mutate(&mut rng, &text)
        } else {
            text
        };
        if case % 5 == 0 {}
        if case == 631 {
            println!("{:?}", String::from_utf8_lossy(&text));
        }
    }
}
