use super::*;
use crate::algo::{RoomNotes, Stage};
use crate::data::Data;

/// A run with these stages (as a trace reads them back), for the answer checks below.
fn run_of(stages: Vec<Stage>) -> RunResult {
    RunResult {
        algorithm: crate::algo::Algo::Copy,
        variant: "t".into(),
        dtype: DType::U32,
        n: stages[0].data.len(),
        adapter: "t".into(),
        input: stages[0].data.clone(),
        output: stages.last().unwrap().data.clone(),
        output_json: None,
        passes: Vec::new(),
        verified: true,
        mismatch: None,
        stages,
        extra: Default::default(),
    }
}

#[test]
fn every_shipped_lesson_parses_and_the_list_is_the_folder() {
    let all = shipped().unwrap();
    assert_eq!(all.len(), SHIPPED.len());
    let ids: Vec<&str> = all.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["bitrev", "bmmc", "oddeven", "scan", "fft", "radix"]);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/lessons");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "json").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    files.sort();
    let mut names: Vec<String> = SHIPPED.iter().map(|(n, _)| n.to_string()).collect();
    names.sort();
    assert_eq!(files, names);
    // Exercises come in course order.
    let bitrev = &all[0];
    let order: Vec<String> = bitrev
        .exercises_in_order()
        .iter()
        .map(|(r, _)| r.name.clone())
        .collect();
    assert_eq!(order, ["bitrev-naive", "bitrev-coalesced"]);
    // A step without a run shows the one before it.
    assert_eq!(
        serde_json::to_string(bitrev.run_of(2).unwrap()).unwrap(),
        serde_json::to_string(bitrev.steps[1].run.as_ref().unwrap()).unwrap()
    );
}

#[test]
fn bad_lessons_name_their_line() {
    let ok = r#"{
  "id": "t",
  "title": "T",
  "steps": [
    {"title": "one", "text": "x", "run": {"algorithm": "bitrev"}}
  ]
}"#;
    assert_eq!(Lesson::from_json("t", ok).unwrap().steps.len(), 1);
    let cases = [
        // An unknown field of a step.
        (ok.replace("\"text\": \"x\"", "\"text\": \"x\", \"colour\": 1"), "line 5", "colour"),
        // A typo inside the run (serde would drop it).
        (ok.replace("\"algorithm\": \"bitrev\"", "\"algorithm\": \"bitrev\", \"varient\": \"naive\""), "line 5", "varient"),
        // A run that does not resolve.
        (ok.replace("\"algorithm\": \"bitrev\"", "\"algorithm\": \"bitrev\", \"variant\": \"nope\""), "line 5", "unknown variant"),
        // A question kind that does not exist.
        (ok.replace("\"text\": \"x\"", "\"text\": \"x\",\n \"question\": {\"kind\": \"guess\", \"ask\": \"?\"}"), "line 6", "guess"),
        // A sectors question without the lens.
        (ok.replace("\"text\": \"x\"", "\"text\": \"x\", \"question\": {\"kind\": \"sectors\", \"pass\": 0, \"access\": \"write\", \"ask\": \"?\"}"), "line 5", "lens on"),
        // An exercise that does not exist.
        (ok.replace("  ]\n}", "  ],\n  \"exercises\": [{\"name\": \"nope\"}]\n}"), "line 7", "no exercise 'nope'"),
        // No run in the first step.
        (ok.replace(", \"run\": {\"algorithm\": \"bitrev\"}", ""), "line 5", "needs a \"run\""),
        // Not JSON at all.
        ("{\n\n oops".to_string(), "line 3", "lesson 't'"),
    ];
    for (text, line, why) in cases {
        let e = Lesson::from_json("t", &text).unwrap_err().to_string();
        assert!(
            e.contains(line) && e.contains(why),
            "{e}\n--- for ---\n{text}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn answers_come_from_the_stage_read_back() {
    let input = Stage::new("input", Data::from_u32(&[41, 67, 34, 0]));
    let after = Stage::new("stage 1", Data::from_u32(&[41, 34, 67, 0]));
    let r = run_of(vec![input, after]);
    let q = Question::Position {
        ask: "?".into(),
        stage: Some(1),
        element: 1,
    };
    let a = q.answer(&r, None, None).unwrap();
    assert!(a.check("2").unwrap().right);
    let wrong = a.check("1").unwrap();
    assert!(!wrong.right);
    assert!(
        wrong.text.contains("you said 1") && wrong.text.contains("index 2"),
        "{}",
        wrong.text
    );
    assert!(a.check("two").is_err());
    let q = Question::Value {
        ask: "?".into(),
        stage: None,
        index: 1,
    };
    // No stage named: the step's shown stage.
    assert!(
        q.answer(&r, Some(1), None)
            .unwrap()
            .check("34")
            .unwrap()
            .right
    );
    assert!(
        q.answer(&r, Some(0), None)
            .unwrap()
            .check("67")
            .unwrap()
            .right
    );
    assert!(
        q.answer(&r, Some(5), None)
            .unwrap_err()
            .contains("past the run's last stage")
    );
    // Repeated values cannot say where an element went.
    let dup = run_of(vec![
        Stage::new("input", Data::from_u32(&[1, 1])),
        Stage::new("s", Data::from_u32(&[1, 1])),
    ]);
    let q = Question::Position {
        ask: "?".into(),
        stage: Some(1),
        element: 0,
    };
    assert!(q.answer(&dup, None, None).unwrap_err().contains("distinct"));
    // Swaps need a sort's pairs; owners an FFT's threads; sectors the lens.
    let q = Question::Swaps {
        ask: "?".into(),
        stage: Some(1),
    };
    assert!(
        q.answer(&r, None, None)
            .unwrap_err()
            .contains("no compared pairs")
    );
    let q = Question::Sectors {
        ask: "?".into(),
        pass: 0,
        access: AccessKind::Write,
        tolerance: None,
    };
    assert!(q.answer(&r, None, None).unwrap_err().contains("lens"));
    let _ = RoomNotes::None;
}

#[test]
fn a_set_answer_ignores_order_and_spacing() {
    let a = Answer {
        text: "(2, 3) (8, 9)".into(),
        expect: Expect::Set(vec![2, 8]),
    };
    assert!(a.check("8, 2").unwrap().right);
    assert!(a.check(" 2 8 ").unwrap().right);
    assert!(!a.check("2").unwrap().right);
    let none = Answer {
        text: "no pair swapped".into(),
        expect: Expect::Set(vec![]),
    };
    assert!(none.check("").unwrap().right);
    let near = Answer {
        text: "32.0".into(),
        expect: Expect::Near(32.0, 0.5),
    };
    assert!(near.check("32").unwrap().right);
    assert!(!near.check("4").unwrap().right);
}
