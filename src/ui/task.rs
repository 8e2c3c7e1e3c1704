//! GPU work off the UI frame, on both targets: natively a worker thread that waits on the async
//! engine (`pollster::block_on`), in the browser a task on the page that yields at every
//! read-back. Results come back through the channels the app polls every frame.

use eframe::egui;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

/// Start the future `make` returns, off the UI frame. `make` runs on the worker (natively) or at
/// once (in the browser); the future need not be `Send`.
#[cfg(not(target_arch = "wasm32"))]
pub fn spawn<F, Fut>(make: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + 'static,
{
    std::thread::spawn(move || pollster::block_on(make()));
}

/// Start the future `make` returns, off the UI frame. `make` runs on the worker (natively) or at
/// once (in the browser); the future need not be `Send`.
#[cfg(target_arch = "wasm32")]
pub fn spawn<F, Fut>(make: F)
where
    F: FnOnce() -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    wasm_bindgen_futures::spawn_local(make());
}

/// The UI's side of a worker: what it sent, and a stop flag it reads between its steps.
pub struct Worker<M> {
    rx: Receiver<M>,
    stop: Arc<AtomicBool>,
}

/// The worker's side: send (each message repaints the UI) and ask whether to stop.
pub struct Reply<M> {
    tx: Sender<M>,
    stop: Arc<AtomicBool>,
    ctx: egui::Context,
}

impl<M> Reply<M> {
    pub fn send(&self, m: M) {
        let _ = self.tx.send(m);
        self.ctx.request_repaint();
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl<M> Worker<M> {
    /// A channel and a stop flag: the UI keeps the worker, the task takes the reply.
    pub fn new(ctx: &egui::Context) -> (Worker<M>, Reply<M>) {
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let reply = Reply {
            tx,
            stop: stop.clone(),
            ctx: ctx.clone(),
        };
        (Worker { rx, stop }, reply)
    }

    /// Ask the worker to stop at its next check.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Every message sent since the last call.
    pub fn take(&self) -> Vec<M> {
        self.rx.try_iter().collect()
    }
}
