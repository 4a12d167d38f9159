//! Field overrides: `path=value` set into a template's JSON body before it is signed, so a user
//! can change an amount, force an object id (several events about the same `pi_…`), or a
//! status. `path` is a dotted path (`data.object.id`, `items.0.price`) or a JSON pointer
//! (`/data/object/id`); `value` is read as JSON when it parses (`5000`, `true`, `"007"`,
//! `{"a":1}`), else taken as a string (`pi_123`).

use super::TemplateError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One field to set in a test event's body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Override {
    /// A dotted path (`data.object.id`) or a JSON pointer (`/data/object/id`).
    pub path: String,
    /// The value to put there.
    pub value: Value,
}

impl Override {
    /// Parses `path=value` (the first `=` splits). The value is JSON when it parses as JSON,
    /// else a string: `amount=5000` sets a number, `id=pi_1` a string, `id="5000"` a string.
    pub fn parse(spec: &str) -> Result<Self, TemplateError> {
        let bad = |detail: &str| TemplateError::BadOverride {
            spec: spec.to_string(),
            detail: detail.to_string(),
        };
        let (path, raw) = spec
            .split_once('=')
            .ok_or_else(|| bad("expected `path=value`, e.g. `data.object.amount=5000`"))?;
        let path = path.trim();
        if path.is_empty() || path == "/" {
            return Err(bad("the path is empty"));
        }
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        Ok(Self {
            path: path.to_string(),
            value,
        })
    }

    /// The path's segments: a JSON pointer's (with `~1` and `~0` unescaped) or a dotted path's.
    fn segments(&self) -> Result<Vec<String>, TemplateError> {
        let segments: Vec<String> = match self.path.strip_prefix('/') {
            Some(pointer) => pointer
                .split('/')
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect(),
            None => self.path.split('.').map(str::to_string).collect(),
        };
        if self.path.is_empty()
            || (!self.path.starts_with('/') && segments.iter().any(String::is_empty))
        {
            return Err(TemplateError::BadPath {
                path: self.path.clone(),
                detail: "a dotted path has an empty segment (use a JSON pointer for odd keys)"
                    .into(),
            });
        }
        Ok(segments)
    }

    /// Sets the value in `body`, creating missing objects on the way. Arrays are indexed by
    /// number (`items.0.price`; the index one past the end appends).
    pub(super) fn apply(&self, body: &mut Value) -> Result<(), TemplateError> {
        let segments = self.segments()?;
        let fail = |detail: String| TemplateError::BadPath {
            path: self.path.clone(),
            detail,
        };
        let mut at = body;
        let mut walked = String::new();
        for (i, segment) in segments.iter().enumerate() {
            let last = i + 1 == segments.len();
            let here = if walked.is_empty() {
                "the body".to_string()
            } else {
                format!("`{walked}`")
            };
            at = match at {
                Value::Object(map) => {
                    if last {
                        map.insert(segment.clone(), self.value.clone());
                        return Ok(());
                    }
                    map.entry(segment.clone())
                        .or_insert_with(|| Value::Object(Default::default()))
                }
                Value::Array(items) => {
                    let len = items.len();
                    let index: usize = segment.parse().map_err(|_| {
                        fail(format!("{here} is an array: `{segment}` is not an index"))
                    })?;
                    if index > len {
                        return Err(fail(format!(
                            "{here} has {len} items: index {index} is past the end"
                        )));
                    }
                    if index == len {
                        items.push(match last {
                            true => self.value.clone(),
                            false => Value::Object(Default::default()),
                        });
                        if last {
                            return Ok(());
                        }
                    } else if last {
                        items[index] = self.value.clone();
                        return Ok(());
                    }
                    &mut items[index]
                }
                other => {
                    return Err(fail(format!(
                        "{here} is {}, not an object: `{segment}` cannot be set inside it",
                        kind(other)
                    )));
                }
            };
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(segment);
        }
        Ok(())
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(body: &mut Value, spec: &str) -> Result<(), TemplateError> {
        Override::parse(spec)?.apply(body)
    }

    #[test]
    fn values_are_json_when_they_parse_else_strings() {
        assert_eq!(Override::parse("a=5000").unwrap().value, json!(5000));
        assert_eq!(Override::parse("a=pi_1").unwrap().value, json!("pi_1"));
        assert_eq!(Override::parse("a=\"5000\"").unwrap().value, json!("5000"));
        assert_eq!(Override::parse("a=true").unwrap().value, json!(true));
        assert_eq!(Override::parse("a=").unwrap().value, json!(""));
        assert_eq!(
            Override::parse("a=x=y").unwrap().value,
            json!("x=y"),
            "first `=` splits"
        );
        assert_eq!(
            Override::parse("a={\"b\":1}").unwrap().value,
            json!({"b": 1})
        );
        let err = Override::parse("no-equals").unwrap_err().to_string();
        assert!(err.contains("path=value"), "{err}");
        assert!(Override::parse("=1").is_err(), "empty path");
    }

    #[test]
    fn dotted_paths_and_pointers_set_nested_fields() {
        let mut body =
            json!({"data": {"object": {"id": "pi_1", "amount": 1}}, "items": [{"p": 1}]});
        set(&mut body, "data.object.amount=5000").unwrap();
        set(&mut body, "/data/object/id=pi_X").unwrap();
        set(&mut body, "items.0.p=2").unwrap();
        set(&mut body, "items.1=3").unwrap();
        set(&mut body, "data.new.deep=x").unwrap();
        set(&mut body, "/a~1b=slash").unwrap();
        assert_eq!(
            body,
            json!({"data": {"object": {"id": "pi_X", "amount": 5000}, "new": {"deep": "x"}},
                   "items": [{"p": 2}, 3], "a/b": "slash"})
        );
    }

    #[test]
    fn bad_paths_say_where_they_fail() {
        let mut body = json!({"data": {"id": "1"}, "items": [1]});
        let err = set(&mut body, "data.id.deeper=1").unwrap_err().to_string();
        assert!(
            err.contains("`data.id` is a string, not an object"),
            "{err}"
        );
        let err = set(&mut body, "items.x=1").unwrap_err().to_string();
        assert!(err.contains("not an index"), "{err}");
        let err = set(&mut body, "items.5=1").unwrap_err().to_string();
        assert!(err.contains("past the end"), "{err}");
        let err = set(&mut body, "data..id=1").unwrap_err().to_string();
        assert!(err.contains("empty segment"), "{err}");
        let mut scalar = json!(1);
        let err = set(&mut scalar, "a=1").unwrap_err().to_string();
        assert!(err.contains("the body is a number"), "{err}");
    }
}
