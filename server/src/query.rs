//! The query string of every route: each parameter at most once (a repeated one is refused,
//! never silently the first or the last), and a query that does not fit the route is the JSON
//! error `invalid_argument`, not the framework's plain text.

use std::collections::HashSet;
use std::ops::Deref;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
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

/// Refuses a parameter given more than once.
fn refuse_repeated(pairs: &[(String, String)]) -> Result<(), ApiError> {
    let mut seen = HashSet::with_capacity(pairs.len());
    for (name, _) in pairs {
        if !seen.insert(name.as_str()) {
            return Err(ApiError::bad_request(format!(
                "the parameter '{}' is given more than once",
                name.escape_debug()
            )));
        }
    }
    Ok(())
}

#[axum::async_trait]
impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let axum::extract::Query(pairs) =
            axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
                .map_err(not_understood)?;
        refuse_repeated(&pairs)?;
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|axum::extract::Query(value)| Query(value))
            .map_err(not_understood)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_repeated_parameter_is_refused_by_name() {
        assert!(refuse_repeated(&pairs(&[("count", "5"), ("format", "base32")])).is_ok());
        let error = refuse_repeated(&pairs(&[("count", "5"), ("count", "6")])).unwrap_err();
        assert_eq!(error.code, "invalid_argument");
        assert!(error.message.contains("'count'"), "{}", error.message);
        // Same value twice is still twice.
        assert!(refuse_repeated(&pairs(&[("id", "1"), ("x", ""), ("id", "1")])).is_err());
    }
}
