//! The provider through terrane-sdk's harness: create, no-change plan,
//! drift, destroy.

use terraform_provider_notes::Notes;
use terrane_sdk::testing::Harness;
use terrane_sdk::values;

#[tokio::test]
async fn note_lifecycle() {
    let dir = std::env::temp_dir().join(format!("notes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let h = Harness::new(Notes);
    let directory = values::string(dir.display().to_string());
    h.configure(&values::object([("directory", directory)]))
        .await
        .unwrap();
    let config = values::object([
        ("name", values::string("hello")),
        ("text", values::string("hi")),
    ]);
    let null = h.null_state("notes_note").await.unwrap();
    let state = h.apply_config("notes_note", &null, &config).await.unwrap();
    assert!(h
        .plan("notes_note", &state, &config)
        .await
        .unwrap()
        .is_noop(&state));
    std::fs::write(dir.join("hello"), "changed").unwrap();
    let drifted = h.read("notes_note", &state).await.unwrap().unwrap();
    assert!(!h
        .plan("notes_note", &drifted, &config)
        .await
        .unwrap()
        .is_noop(&drifted));
    h.destroy("notes_note", &state).await.unwrap();
    assert!(!dir.join("hello").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
