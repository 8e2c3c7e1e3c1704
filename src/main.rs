#[cfg(not(target_arch = "wasm32"))]
use clap::Parser;
#[cfg(not(target_arch = "wasm32"))]
use stagewise::cli::{Cli, Cmd, dispatch};

/// In the browser (web/build): the app on the page's canvas.
#[cfg(target_arch = "wasm32")]
fn main() {
    stagewise::web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    // Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid" on every device when it is unset
    // (headless machines, CI); give them a harmless value so stderr keeps to our one-line errors.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: at the top of main, before any thread exists.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    // No backtraces for users: a panic is a bug, reported in one line.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("stagewise: internal error: {info}");
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind::*;
            match e.kind() {
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
                _ => {
                    let text = e.render().to_string();
                    let line = text.lines().next().unwrap_or("invalid arguments");
                    let line = line.strip_prefix("error: ").unwrap_or(line);
                    eprintln!("stagewise: error: {line}");
                    std::process::exit(2);
                }
            }
        }
    };
    // The app's wisdom as the CLI's flags say (None: STAGEWISE_WISDOM, else this adapter's).
    let wisdom = match (&cli.wisdom, cli.no_wisdom) {
        (_, true) => Some(stagewise::wisdom::Source::Off),
        (Some(f), false) => Some(stagewise::wisdom::Source::File(f.clone())),
        (None, false) => None,
    };
    let code = match &cli.cmd {
        // `open` starts the app on a link: the binary joins the two front ends.
        Some(Cmd::Open { link }) if cli.session.is_none() => stagewise::link::Link::parse(link)
            .and_then(|l| stagewise::ui::run_app_at(cli.adapter.as_deref(), l, wisdom)),
        Some(cmd) => dispatch(&cli, cmd),
        None => stagewise::ui::run_app(cli.adapter.as_deref(), cli.session.as_deref(), wisdom),
    };
    let code = match code {
        Ok(c) => c,
        Err(e) => {
            eprintln!("stagewise: error: {e}");
            1
        }
    };
    if stagewise::gpu::runner::gpu_hung() {
        exit_now(code);
    }
    std::process::exit(code);
}

/// Ends the process without the exit handlers (a GPU driver's may wait for a kernel that never
/// ends).
#[cfg(unix)]
fn exit_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process at once; nothing runs after it.
    unsafe { libc::_exit(code) }
}

#[cfg(all(not(unix), not(target_arch = "wasm32")))]
fn exit_now(code: i32) -> ! {
    std::process::exit(code)
}
