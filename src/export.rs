//! Saving results: traces as JSON or CSV, arrays as .npy, JSON or text. Shared by CLI and app.

use crate::algo::RunResult;
use crate::data::{DType, Data};
use crate::error::{Error, Result};
use std::path::Path;

fn ext(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// The trace as a file named `name` holds it (`.csv` or JSON): for downloads in the browser.
pub fn trace_bytes(res: &RunResult, name: &str) -> Result<Vec<u8>> {
    if ext(Path::new(name)) == "csv" {
        return Ok(trace_csv(res).into_bytes());
    }
    let mut w = Vec::new();
    res.write_json(&mut w, true, serde_json::Map::new(), true)
        .map_err(|e| Error::Io(format!("cannot encode the trace: {e}")))?;
    Ok(w)
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes)
        .map_err(|e| Error::Io(format!("cannot write '{}': {e}", path.display())))
}

/// The trace as CSV text: one row per element of every stage.
pub fn trace_csv(res: &RunResult) -> String {
    let mut s = String::from("stage,label,index,value\n");
    for (k, st) in res.stages.iter().enumerate() {
        let label = st.label.replace('"', "\"\"");
        for i in 0..st.data.len() {
            s.push_str(&format!("{k},\"{label}\",{i},{}\n", st.data.fmt_elem(i)));
        }
    }
    s
}

/// `.csv` → [`trace_csv`]; anything else → the JSON `stages` array with the run's header fields.
pub fn save_trace(res: &RunResult, path: &Path) -> Result<()> {
    if ext(path) == "csv" {
        write(path, trace_csv(res).as_bytes())
    } else {
        let io = |e: std::io::Error| Error::Io(format!("cannot write '{}': {e}", path.display()));
        let f = std::fs::File::create(path).map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        res.write_json(&mut w, true, serde_json::Map::new(), true)
            .map_err(|e| io(e.into()))?;
        std::io::Write::flush(&mut w).map_err(io)
    }
}

/// Save a run's output, the one path the CLI's `--save-output` and the app's *Save output…* share:
/// `.json` writes exactly the run's JSON `output` field (complex pairs for FFTs), `.npy` and text the
/// output buffer's values in order (FFTs: re, im interleaved).
pub fn save_output(
    output: &Data,
    output_json: Option<&serde_json::Value>,
    path: &Path,
) -> Result<()> {
    write(
        path,
        &output_bytes(output, output_json, &path.to_string_lossy())?,
    )
}

/// [`save_output`]'s bytes for a file named `name`.
pub fn output_bytes(
    output: &Data,
    output_json: Option<&serde_json::Value>,
    name: &str,
) -> Result<Vec<u8>> {
    match output_json {
        Some(v) if ext(Path::new(name)) == "json" => Ok(v.to_string().into_bytes()),
        _ => data_bytes(output, name),
    }
}

/// Save an array by extension: `.npy` (little-endian u4/i4/f4), `.json`, else text.
pub fn save_data(d: &Data, path: &Path) -> Result<()> {
    write(path, &data_bytes(d, &path.to_string_lossy())?)
}

/// [`save_data`]'s bytes for a file named `name`.
pub fn data_bytes(d: &Data, name: &str) -> Result<Vec<u8>> {
    match ext(Path::new(name)).as_str() {
        "npy" => match d.dtype {
            DType::U32 => npy_bytes(d.bits.iter().copied()),
            DType::I32 => npy_bytes(d.bits.iter().map(|&b| b as i32)),
            DType::F32 => npy_bytes(d.bits.iter().map(|&b| f32::from_bits(b))),
        }
        .map_err(|e| Error::Io(format!("cannot encode .npy: {e}"))),
        "json" => Ok(d.to_json().to_string().into_bytes()),
        _ => {
            let mut s = String::new();
            for i in 0..d.len() {
                s.push_str(&d.fmt_elem(i));
                s.push('\n');
            }
            Ok(s.into_bytes())
        }
    }
}

pub fn npy_bytes<T: npyz::AutoSerialize>(
    vals: impl ExactSizeIterator<Item = T>,
) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let n = vals.len() as u64;
    use npyz::WriterBuilder;
    let mut w = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(&[n])
        .writer(&mut buf)
        .begin_nd()?;
    w.extend(vals)?;
    w.finish()?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_and_text_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        for d in [
            Data::from_u32(&[1, 2, 4_000_000_000]),
            Data::from_i32(&[-5, 7]),
            Data::from_f32(&[1.5, f32::NAN, -0.0]),
        ] {
            for name in ["a.npy", "a.json", "a.txt"] {
                let p = dir.join(name);
                save_data(&d, &p).unwrap();
                let back = crate::data::read_input(p.to_str().unwrap(), d.dtype).unwrap();
                assert_eq!(back.len(), d.len(), "{name}");
                for i in 0..d.len() {
                    assert_eq!(back.fmt_elem(i), d.fmt_elem(i), "{name} {i}");
                }
            }
        }
    }
}
