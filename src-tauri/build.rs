//! Tauri's build step, reading the repository's top-level `tauri.conf.json`.

fn main() {
    tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
        .expect("tauri-build failed (is ../tauri.conf.json valid?)");
}
