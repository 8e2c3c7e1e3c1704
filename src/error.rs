//! One error type for the engine, the CLI and the UI. Every failure a user can cause or meet
//! (bad input, limits, GPU validation, out of memory, device loss) ends up here: never a panic.

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// Bad input: a malformed file, an invalid parameter, a size the algorithm cannot take.
    #[error("{0}")]
    Input(String),
    /// A size or parameter beyond what this adapter allows; the message names the limit.
    #[error("{0}")]
    Limit(String),
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    #[error("GPU validation error: {0}")]
    Validation(String),
    #[error("GPU out of memory: {0}")]
    OutOfMemory(String),
    #[error("GPU device lost: {0}")]
    DeviceLost(String),
    #[error("GPU: {0}")]
    Gpu(String),
    #[error("timestamps unavailable: this adapter has no TIMESTAMP_QUERY")]
    TimestampsUnavailable,
    #[error("{0}")]
    Io(String),
    #[error("cancelled")]
    Cancelled,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }

    /// A parameter of a valid form that this adapter cannot take is a `Limit` (another adapter
    /// may run it); one of no valid form is `Input`.
    pub fn input_or_limit(past_limit: bool, msg: String) -> Self {
        if past_limit {
            Error::Limit(msg)
        } else {
            Error::Input(msg)
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}

/// `bail!(Input, "...")`-style shorthand for input errors.
#[macro_export]
macro_rules! input_err {
    ($($arg:tt)*) => { $crate::error::Error::Input(format!($($arg)*)) };
}
