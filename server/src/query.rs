//! The query string: each parameter at most once on every route (a repeated one is refused,
//! never silently the first or the last: the guard checks it), and a query that does not fit
//! its route is the JSON error `invalid_argument`, not the framework's plain text.

use std::collections::HashSet;
use std::ops::Deref;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::Uri;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

pub struct Query<T>(pub T);

impl<T> Deref for Query<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

fn not_understood(rejection: axum::extract::rejection::QueryRejection) -> ApiError {
    let detail = rejection.body_text();
    let detail = detail
        .strip_prefix("Failed to deserialize query string: ")
        .unwrap_or(&detail);
    ApiError::bad_request(format!("the query string is not understood: {detail}"))
}

/// Refuses a parameter given more than once (by its name once percent-decoded).
pub fn refuse_repeated(uri: &Uri) -> Result<(), ApiError> {
    if uri.query().is_none() {
        return Ok(());
    }
    let axum::extract::Query(pairs) =
        axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri).map_err(not_understood)?;
    let mut seen = HashSet::with_capacity(pairs.len());
    for (name, _) in &pairs {
        if !seen.insert(name.as_str()) {
            return Err(ApiError::bad_request(format!(
                "the parameter '{}' is given more than once",
                name.escape_debug()
            )));
        }
    }
    Ok(())
}

impl<T: DeserializeOwned> Query<T> {
    pub fn from_uri(uri: &Uri) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::try_from_uri(uri)
            .map(|axum::extract::Query(value)| Query(value))
            .map_err(not_understood)
    }
}

#[axum::async_trait]
impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        Query::from_uri(&parts.uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(uri: &str) -> Option<ApiError> {
        refuse_repeated(&uri.parse().unwrap()).err()
    }

    #[test]
    fn a_repeated_parameter_is_refused_by_name() {
        assert!(refused("/v1/ids?count=5&format=base32").is_none());
        assert!(refused("/v1/layout").is_none());
        let error = refused("/v1/ids?count=5&count=6").unwrap();
        assert_eq!(error.code, "invalid_argument");
        assert!(error.message.contains("'count'"), "{}", error.message);
        // Same value twice is still twice; an encoded name is the same name.
        assert!(refused("/expid?id=1&x=&id=1").is_some());
        assert!(refused("/expid?id=1&%69d=2").is_some());
    }
}
