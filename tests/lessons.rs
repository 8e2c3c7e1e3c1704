//! `stagewise lesson check` on every shipped lesson (each step's run traced on the GPU, every
//! question answered by it) and on bad files (exit 1, one line naming the line).
#[path = "common/scratch.rs"]
mod scratch;
use scratch::Scratch;
use std::path::Path;
use std::process::Command;

fn stagewise(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stagewise"))
        .args(args)
        .env(
            "WGPU_BACKEND",
            std::env::var("WGPU_BACKEND").unwrap_or("vulkan".into()),
        )
        .output()
        .expect("spawn stagewise");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_shipped_lesson_checks_on_the_gpu() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/lessons");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 6);
    for f in files {
        let (code, out, err) = stagewise(&["lesson", "check", f.to_str().unwrap(), "--answers"]);
        assert_eq!(code, 0, "{}: {err}", f.display());
        assert!(out.contains(": ok: '"), "{out}");
        // Every question got an answer from the run.
        let asked = std::fs::read_to_string(&f)
            .unwrap()
            .matches("\"kind\":")
            .count();
        assert_eq!(out.matches("; answer: ").count(), asked, "{out}");
    }
    // Demo B's element 6 after stage 2, as the GPU moved it.
    let (_, out, _) = stagewise(&[
        "lesson",
        "check",
        dir.join("bitrev.json").to_str().unwrap(),
        "--answers",
    ]);
    assert!(out.contains("answer: index 5 (the value 78)"), "{out}");
    let (code, out, _) = stagewise(&["lesson", "list"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 6, "{out}");
    assert!(out.lines().next().unwrap().starts_with("bitrev"), "{out}");
}

#[test]
fn a_bad_lesson_exits_non_zero_naming_its_line() {
    let dir = Scratch::new("lessons");
    let cases = [
        // Not a lesson field.
        (
            "{\n  \"id\": \"x\",\n  \"title\": \"X\",\n  \"stepz\": []\n}\n",
            "line 4",
            "stepz",
        ),
        // A stage the run does not have (found by running it).
        (
            "{\n \"id\": \"x\",\n \"title\": \"X\",\n \"steps\": [\n  {\"title\": \"a\", \"text\": \"t\", \"run\": {\"algorithm\": \"bitrev\", \"variant\": \"staged\"}},\n  {\"title\": \"b\", \"text\": \"t\", \"view\": {\"stage\": 9}}\n ]\n}\n",
            "line 6",
            "stage 9 is past the run's last stage (4)",
        ),
        // A question this run cannot answer: an FFT question on a sort.
        (
            "{\n \"id\": \"x\",\n \"title\": \"X\",\n \"steps\": [\n  {\"title\": \"a\", \"text\": \"t\",\n   \"run\": {\"algorithm\": \"oddeven\"},\n   \"question\": {\"kind\": \"owner\", \"element\": 1, \"ask\": \"?\"}}\n ]\n}\n",
            "line 5",
            "says nothing of threads",
        ),
        // A run that does not resolve.
        (
            "{\n \"id\": \"x\",\n \"title\": \"X\",\n \"steps\": [\n  {\"title\": \"a\", \"text\": \"t\", \"run\": {\"algorithm\": \"bitrev\", \"input\": {\"from\": \"generate\", \"n\": 12}}}\n ]\n}\n",
            "line 5",
            "power of two",
        ),
    ];
    for (i, (text, line, why)) in cases.iter().enumerate() {
        let f = dir.join(format!("bad{i}.json"));
        std::fs::write(&f, text).unwrap();
        let (code, _, err) = stagewise(&["lesson", "check", f.to_str().unwrap()]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(line) && err.contains(why), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (code, _, err) = stagewise(&["lesson", "check", dir.join("none.json").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read lesson"), "{err}");
}

#[test]
fn open_refuses_a_bad_link_in_one_line() {
    for (link, why) in [
        ("#bitrev/sideways", "unknown variant 'sideways'"),
        ("#bitrev?colour=red", "no option 'colour'"),
        ("#lesson=bitrev&step=0", "step '0' must be 1 or more"),
        ("", "empty"),
    ] {
        let (code, _, err) = stagewise(&["open", link]);
        assert_eq!(code, 1, "{link}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(why), "{link}: {err}");
    }
}
