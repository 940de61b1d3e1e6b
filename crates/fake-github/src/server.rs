//! Request handling: recording, authentication, fault injection, then one function per endpoint.

use std::sync::Arc;

use axum::Router;
use axum::body::to_bytes;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::git::{AUTHOR, Commit, EMAIL};
use crate::{Comment, Pull, RecordedRequest, Repo, Shared, State, Timing};

const DOCS: &str = "https://docs.github.com/rest";
const BODY_LIMIT: usize = 64 * 1024 * 1024;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(move |request: axum::extract::Request| {
        let shared = Arc::clone(&shared);
        async move { handle(&shared, request).await }
    })
}

type Reply = (StatusCode, Value);

fn not_found() -> Reply {
    (
        StatusCode::NOT_FOUND,
        json!({"message": "Not Found", "documentation_url": DOCS, "status": "404"}),
    )
}

fn unprocessable(message: &str) -> Reply {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({"message": message, "documentation_url": DOCS, "status": "422"}),
    )
}

fn validation_failed(resource: &str, message: &str) -> Reply {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({
            "message": "Validation Failed",
            "errors": [{"resource": resource, "code": "custom", "message": message}],
            "documentation_url": DOCS,
            "status": "422",
        }),
    )
}

fn json_response(status: StatusCode, value: &Value, extra: &[(String, String)]) -> Response {
    let mut response = (status, value.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    for (name, value) in extra {
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(name, value);
        }
    }
    response
}

async fn handle(shared: &Shared, request: axum::extract::Request) -> Response {
    let method = request.method().clone();
    let full = request.uri().path_and_query().map_or_else(
        || request.uri().path().to_owned(),
        |p| p.as_str().to_owned(),
    );
    let authorized = authorized(request.headers(), shared.options.token.as_deref());
    let body = to_bytes(request.into_body(), BODY_LIMIT)
        .await
        .unwrap_or_default();

    let mut state = shared.lock();
    state.requests.push(RecordedRequest {
        method: method.to_string(),
        path: full.clone(),
    });
    let Some(relative) = full.strip_prefix(&shared.options.mount) else {
        let (status, value) = not_found();
        return json_response(status, &value, &[]);
    };
    let (path, query) = relative.split_once('?').unwrap_or((relative, ""));
    if !authorized {
        let value =
            json!({"message": "Bad credentials", "documentation_url": DOCS, "status": "401"});
        return json_response(StatusCode::UNAUTHORIZED, &value, &[]);
    }
    let fault = state.take_fault(method.as_str(), path);
    if let Some(fault) = &fault
        && fault.timing == Timing::BeforeApply
    {
        return fault_response(fault);
    }
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        let Ok(value) = serde_json::from_slice(&body) else {
            let value = json!({"message": "Problems parsing JSON", "documentation_url": DOCS, "status": "400"});
            return json_response(StatusCode::BAD_REQUEST, &value, &[]);
        };
        value
    };
    let (status, value) = dispatch(&mut state, shared, &method, path, query, &body);
    // The answer is made: a push due after this request lands before the next one.
    state.run_pushes(method.as_str(), path);
    match fault {
        Some(fault) => fault_response(&fault),
        None => json_response(status, &value, &[]),
    }
}

fn fault_response(fault: &crate::Fault) -> Response {
    let status = StatusCode::from_u16(fault.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let value = json!({"message": fault.message, "documentation_url": DOCS});
    json_response(status, &value, &fault.headers)
}

fn authorized(headers: &HeaderMap, expected: Option<&str>) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("token "))
        .unwrap_or("");
    match expected {
        Some(expected) => token == expected,
        None => !token.is_empty(),
    }
}

fn dispatch(
    state: &mut State,
    shared: &Shared,
    method: &Method,
    path: &str,
    query: &str,
    body: &Value,
) -> Reply {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ["repos", owner, name, rest @ ..] = segments.as_slice() else {
        return not_found();
    };
    let full_name = format!("{owner}/{name}");
    let time = state.tick();
    let id = state.id();
    let Some(repo) = state.repos.get_mut(&full_name) else {
        return not_found();
    };
    let ctx = Ctx {
        api: shared.api_url(),
        origin: shared.origin.clone(),
        time,
        id,
    };
    let m = method.as_str();
    match (m, rest) {
        ("GET", []) => (StatusCode::OK, render_repo(&ctx, repo)),
        ("GET", ["git", "ref", reference @ ..]) => get_ref(&ctx, repo, &reference.join("/")),
        ("POST", ["git", "refs"]) => create_ref(&ctx, repo, body),
        ("PATCH", ["git", "refs", reference @ ..]) => {
            update_ref(&ctx, repo, &reference.join("/"), body)
        }
        ("GET", ["git", "commits", sha]) => match repo.store.commit(sha) {
            Some(commit) => (StatusCode::OK, render_commit(&ctx, repo, sha, commit)),
            None => not_found(),
        },
        ("POST", ["git", "commits"]) => create_commit(&ctx, repo, body),
        ("GET", ["git", "trees", sha]) => get_tree(&ctx, repo, sha, query),
        ("POST", ["git", "trees"]) => create_tree(&ctx, repo, body),
        ("GET", ["git", "blobs", sha]) => match repo.store.blob(sha) {
            Some(content) => (
                StatusCode::OK,
                json!({
                    "sha": sha,
                    "node_id": format!("B_{sha}"),
                    "size": content.len(),
                    "url": format!("{}/repos/{}/{}/git/blobs/{sha}", ctx.api, repo.owner, repo.name),
                    "content": BASE64.encode(content),
                    "encoding": "base64",
                }),
            ),
            None => not_found(),
        },
        ("POST", ["git", "blobs"]) => create_blob(&ctx, repo, body),
        ("GET", ["pulls"]) => list_pulls(&ctx, repo, query),
        ("POST", ["pulls"]) => create_pull(&ctx, repo, body),
        ("GET", ["pulls", number]) => match find_pull(repo, number) {
            Some(index) => (StatusCode::OK, render_pull(&ctx, repo, &repo.pulls[index])),
            None => not_found(),
        },
        ("PATCH", ["pulls" | "issues", number]) => update_pull(&ctx, repo, number, body),
        ("POST", ["issues", number, "labels"]) => add_labels(&ctx, repo, number, body),
        ("GET", ["issues", number, "comments"]) => match number.parse::<u64>() {
            Ok(number) => {
                let list: Vec<Value> = repo
                    .comments
                    .iter()
                    .filter(|c| c.issue == number)
                    .map(|c| render_comment(&ctx, repo, c))
                    .collect();
                (StatusCode::OK, Value::Array(list))
            }
            Err(_) => not_found(),
        },
        ("POST", ["issues", number, "comments"]) => create_comment(&ctx, repo, number, body),
        _ => not_found(),
    }
}

struct Ctx {
    /// API base, mount included.
    api: String,
    /// Web origin, for `html_url`s.
    origin: String,
    time: i64,
    id: u64,
}

fn timestamp(epoch: i64) -> String {
    // Civil-from-days (Howard Hinnant), enough for ISO 8601 timestamps in responses.
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

fn repo_api(ctx: &Ctx, repo: &Repo) -> String {
    format!("{}/repos/{}/{}", ctx.api, repo.owner, repo.name)
}

fn render_owner(ctx: &Ctx, login: &str) -> Value {
    json!({
        "login": login,
        "id": 1,
        "node_id": "MDQ6VXNlcjE=",
        "type": "User",
        "site_admin": false,
        "url": format!("{}/users/{login}", ctx.api),
        "html_url": format!("{}/{login}", ctx.origin),
    })
}

fn render_repo(ctx: &Ctx, repo: &Repo) -> Value {
    json!({
        "id": repo.id,
        "node_id": format!("R_{}", repo.id),
        "name": repo.name,
        "full_name": format!("{}/{}", repo.owner, repo.name),
        "owner": render_owner(ctx, &repo.owner),
        "private": false,
        "html_url": format!("{}/{}/{}", ctx.origin, repo.owner, repo.name),
        "description": null,
        "fork": false,
        "url": repo_api(ctx, repo),
        "default_branch": repo.default_branch,
        "visibility": "public",
        "archived": false,
        "disabled": false,
        "permissions": {"admin": false, "maintain": false, "push": true, "triage": true, "pull": true},
    })
}

fn render_ref(ctx: &Ctx, repo: &Repo, reference: &str, sha: &str) -> Value {
    json!({
        "ref": format!("refs/{reference}"),
        "node_id": format!("REF_{reference}"),
        "url": format!("{}/git/refs/{reference}", repo_api(ctx, repo)),
        "object": {
            "type": "commit",
            "sha": sha,
            "url": format!("{}/git/commits/{sha}", repo_api(ctx, repo)),
        },
    })
}

fn get_ref(ctx: &Ctx, repo: &Repo, reference: &str) -> Reply {
    match repo.refs.get(reference) {
        Some(sha) => (StatusCode::OK, render_ref(ctx, repo, reference, sha)),
        None => not_found(),
    }
}

fn create_ref(ctx: &Ctx, repo: &mut Repo, body: &Value) -> Reply {
    let (Some(full), Some(sha)) = (body["ref"].as_str(), body["sha"].as_str()) else {
        return unprocessable("Invalid request.\n\n\"ref\", \"sha\" weren't supplied.");
    };
    let Some(reference) = full.strip_prefix("refs/").filter(|r| r.contains('/')) else {
        return unprocessable("Reference name is invalid");
    };
    if repo.refs.contains_key(reference) {
        return unprocessable("Reference already exists");
    }
    if repo.store.commit(sha).is_none() {
        return unprocessable("Object does not exist");
    }
    repo.refs.insert(reference.to_owned(), sha.to_owned());
    (StatusCode::CREATED, render_ref(ctx, repo, reference, sha))
}

fn update_ref(ctx: &Ctx, repo: &mut Repo, reference: &str, body: &Value) -> Reply {
    let Some(sha) = body["sha"].as_str() else {
        return unprocessable("Invalid request.\n\n\"sha\" wasn't supplied.");
    };
    let force = body["force"].as_bool().unwrap_or(false);
    let Some(current) = repo.refs.get(reference).cloned() else {
        return unprocessable("Reference does not exist");
    };
    if repo.store.commit(sha).is_none() {
        return unprocessable("Object does not exist");
    }
    if !force && !repo.store.is_ancestor(&current, sha) {
        return unprocessable("Update is not a fast forward");
    }
    repo.refs.insert(reference.to_owned(), sha.to_owned());
    (StatusCode::OK, render_ref(ctx, repo, reference, sha))
}

fn render_signature(time: i64) -> Value {
    json!({"name": AUTHOR, "email": EMAIL, "date": timestamp(time)})
}

fn render_commit(ctx: &Ctx, repo: &Repo, sha: &str, commit: &Commit) -> Value {
    let api = repo_api(ctx, repo);
    let parents: Vec<Value> = commit
        .parents
        .iter()
        .map(|p| {
            json!({
                "sha": p,
                "url": format!("{api}/git/commits/{p}"),
                "html_url": format!("{}/{}/{}/commit/{p}", ctx.origin, repo.owner, repo.name),
            })
        })
        .collect();
    json!({
        "sha": sha,
        "node_id": format!("C_{sha}"),
        "url": format!("{api}/git/commits/{sha}"),
        "html_url": format!("{}/{}/{}/commit/{sha}", ctx.origin, repo.owner, repo.name),
        "author": render_signature(commit.time),
        "committer": render_signature(commit.time),
        "message": commit.message,
        "tree": {"sha": commit.tree, "url": format!("{api}/git/trees/{}", commit.tree)},
        "parents": parents,
        "verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null},
    })
}

fn create_commit(ctx: &Ctx, repo: &mut Repo, body: &Value) -> Reply {
    let (Some(message), Some(tree)) = (body["message"].as_str(), body["tree"].as_str()) else {
        return unprocessable("Invalid request.\n\n\"message\", \"tree\" weren't supplied.");
    };
    if repo.store.tree(tree).is_none() {
        return unprocessable("Tree SHA does not exist");
    }
    let mut parents = Vec::new();
    for parent in body["parents"].as_array().into_iter().flatten() {
        let Some(parent) = parent.as_str().filter(|p| repo.store.commit(p).is_some()) else {
            return unprocessable("Parent SHA does not exist or is not a commit object");
        };
        parents.push(parent.to_owned());
    }
    let commit = Commit {
        tree: tree.to_owned(),
        parents,
        message: message.to_owned(),
        time: ctx.time,
    };
    let sha = repo.store.put_commit(commit.clone());
    (StatusCode::CREATED, render_commit(ctx, repo, &sha, &commit))
}

fn render_tree(ctx: &Ctx, repo: &Repo, sha: &str, recursive: bool) -> Value {
    let api = repo_api(ctx, repo);
    let mut entries = Vec::new();
    let mut stack = vec![(sha.to_owned(), String::new())];
    while let Some((tree, prefix)) = stack.pop() {
        for entry in repo.store.tree(&tree).into_iter().flatten() {
            let path = format!("{prefix}{}", entry.name);
            let kind = entry.kind();
            let mut value = json!({
                "path": path,
                "mode": entry.mode,
                "type": kind,
                "sha": entry.sha,
                "url": format!("{api}/git/{kind}s/{}", entry.sha),
            });
            if let Some(content) = repo.store.blob(&entry.sha) {
                value["size"] = json!(content.len());
            }
            entries.push(value);
            if recursive && kind == "tree" {
                stack.push((entry.sha.clone(), format!("{path}/")));
            }
        }
    }
    if recursive {
        entries.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    }
    json!({"sha": sha, "url": format!("{api}/git/trees/{sha}"), "tree": entries, "truncated": false})
}

fn get_tree(ctx: &Ctx, repo: &Repo, sha: &str, query: &str) -> Reply {
    if repo.store.tree(sha).is_none() {
        return not_found();
    }
    let recursive = query.split('&').any(|pair| {
        pair.starts_with("recursive=") && pair != "recursive=0" && pair != "recursive=false"
    });
    (StatusCode::OK, render_tree(ctx, repo, sha, recursive))
}

fn create_tree(ctx: &Ctx, repo: &mut Repo, body: &Value) -> Reply {
    let mut leaves = match body["base_tree"].as_str() {
        Some(base) if repo.store.tree(base).is_some() => repo.store.leaves(base),
        Some(_) => return unprocessable("base_tree is not a valid tree oid"),
        None => crate::git::Leaves::new(),
    };
    let Some(items) = body["tree"].as_array() else {
        return unprocessable("Invalid request.\n\n\"tree\" wasn't supplied.");
    };
    for item in items {
        let (Some(path), Some(mode)) = (item["path"].as_str(), item["mode"].as_str()) else {
            return unprocessable("Invalid request.\n\n\"path\", \"mode\" weren't supplied.");
        };
        if !matches!(mode, "100644" | "100755" | "040000" | "160000" | "120000") {
            return unprocessable(&format!("Invalid tree mode {mode}"));
        }
        let sha = match (&item["sha"], item["content"].as_str()) {
            (Value::Null, Some(content)) => repo.store.put_blob(content.as_bytes().to_vec()),
            (Value::Null, None) if item.get("sha").is_some() => {
                leaves.remove(path);
                let prefix = format!("{path}/");
                leaves.retain(|p, _| !p.starts_with(&prefix));
                continue;
            }
            (Value::String(sha), None) => sha.clone(),
            _ => return unprocessable("Must supply either tree.sha or tree.content"),
        };
        let exists = match mode {
            "040000" => repo.store.tree(&sha).is_some(),
            "160000" => true,
            _ => repo.store.blob(&sha).is_some(),
        };
        if !exists {
            return unprocessable(&format!("tree.sha {sha} is not a valid blob"));
        }
        if mode == "040000" {
            let prefix = format!("{path}/");
            leaves.retain(|p, _| !p.starts_with(&prefix));
            for (sub, value) in repo.store.leaves(&sha) {
                leaves.insert(format!("{prefix}{sub}"), value);
            }
        } else {
            leaves.insert(path.to_owned(), (mode.to_owned(), sha));
        }
    }
    let sha = repo.store.build_tree(&leaves);
    (StatusCode::CREATED, render_tree(ctx, repo, &sha, false))
}

fn create_blob(ctx: &Ctx, repo: &mut Repo, body: &Value) -> Reply {
    let Some(content) = body["content"].as_str() else {
        return unprocessable("Invalid request.\n\n\"content\" wasn't supplied.");
    };
    let bytes = match body["encoding"].as_str().unwrap_or("utf-8") {
        "utf-8" => content.as_bytes().to_vec(),
        "base64" => match BASE64.decode(content.replace('\n', "")) {
            Ok(bytes) => bytes,
            Err(_) => return unprocessable("Invalid base64 content"),
        },
        other => return unprocessable(&format!("Invalid encoding {other}")),
    };
    let sha = repo.store.put_blob(bytes);
    (
        StatusCode::CREATED,
        json!({"url": format!("{}/git/blobs/{sha}", repo_api(ctx, repo)), "sha": sha}),
    )
}

fn render_label(ctx: &Ctx, repo: &Repo, name: &str) -> Value {
    json!({
        "id": 1,
        "node_id": format!("LA_{name}"),
        "url": format!("{}/labels/{name}", repo_api(ctx, repo)),
        "name": name,
        "description": null,
        "color": "ededed",
        "default": false,
    })
}

fn render_branch(ctx: &Ctx, repo: &Repo, branch: &str) -> Value {
    json!({
        "label": format!("{}:{branch}", repo.owner),
        "ref": branch,
        "sha": repo.refs.get(&format!("heads/{branch}")),
        "user": render_owner(ctx, &repo.owner),
        "repo": render_repo(ctx, repo),
    })
}

fn render_pull(ctx: &Ctx, repo: &Repo, pull: &Pull) -> Value {
    let api = repo_api(ctx, repo);
    let html = format!(
        "{}/{}/{}/pull/{}",
        ctx.origin, repo.owner, repo.name, pull.number
    );
    let labels: Vec<Value> = pull
        .labels
        .iter()
        .map(|l| render_label(ctx, repo, l))
        .collect();
    json!({
        "url": format!("{api}/pulls/{}", pull.number),
        "id": pull.id,
        "node_id": format!("PR_{}", pull.id),
        "html_url": html,
        "diff_url": format!("{html}.diff"),
        "patch_url": format!("{html}.patch"),
        "issue_url": format!("{api}/issues/{}", pull.number),
        "number": pull.number,
        "state": if pull.open { "open" } else { "closed" },
        "locked": false,
        "title": pull.title,
        "user": render_owner(ctx, "tagpin-bot"),
        "body": pull.body,
        "labels": labels,
        "created_at": timestamp(pull.created),
        "updated_at": timestamp(pull.updated),
        "closed_at": if pull.open { Value::Null } else { json!(timestamp(pull.updated)) },
        "merged_at": null,
        "draft": false,
        "head": render_branch(ctx, repo, &pull.head),
        "base": render_branch(ctx, repo, &pull.base),
        "author_association": "OWNER",
    })
}

fn query_param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| percent_decode(v))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                if let Ok(b) = u8::from_str_radix(hex, 16) {
                    out.push(b);
                    i += 3;
                } else {
                    out.push(b'%');
                    i += 1;
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn list_pulls(ctx: &Ctx, repo: &Repo, query: &str) -> Reply {
    let state = query_param(query, "state").unwrap_or_else(|| "open".to_owned());
    let head = query_param(query, "head");
    let base = query_param(query, "base");
    let list: Vec<Value> = repo
        .pulls
        .iter()
        .filter(|p| match state.as_str() {
            "open" => p.open,
            "closed" => !p.open,
            _ => true,
        })
        .filter(|p| {
            head.as_deref()
                .is_none_or(|h| h == format!("{}:{}", repo.owner, p.head))
        })
        .filter(|p| base.as_deref().is_none_or(|b| b == p.base))
        .map(|p| render_pull(ctx, repo, p))
        .collect();
    (StatusCode::OK, Value::Array(list))
}

fn create_pull(ctx: &Ctx, repo: &mut Repo, body: &Value) -> Reply {
    let (Some(title), Some(head), Some(base)) = (
        body["title"].as_str(),
        body["head"].as_str(),
        body["base"].as_str(),
    ) else {
        return unprocessable(
            "Invalid request.\n\n\"title\", \"head\", \"base\" weren't supplied.",
        );
    };
    let owner_prefix = format!("{}:", repo.owner);
    let head = head.strip_prefix(&owner_prefix).unwrap_or(head);
    if !repo.refs.contains_key(&format!("heads/{head}")) {
        return validation_failed("PullRequest", &format!("head {head} does not exist"));
    }
    if !repo.refs.contains_key(&format!("heads/{base}")) {
        return validation_failed("PullRequest", &format!("base {base} does not exist"));
    }
    if repo
        .pulls
        .iter()
        .any(|p| p.open && p.head == head && p.base == base)
    {
        return validation_failed(
            "PullRequest",
            &format!("A pull request already exists for {}:{head}.", repo.owner),
        );
    }
    let number = repo.next_number;
    repo.next_number += 1;
    repo.pulls.push(Pull {
        id: ctx.id,
        number,
        open: true,
        title: title.to_owned(),
        body: body["body"].as_str().map(str::to_owned),
        head: head.to_owned(),
        base: base.to_owned(),
        labels: Vec::new(),
        created: ctx.time,
        updated: ctx.time,
    });
    let pull = repo.pulls.last().expect("just pushed");
    (StatusCode::CREATED, render_pull(ctx, repo, pull))
}

fn find_pull(repo: &Repo, number: &str) -> Option<usize> {
    let number: u64 = number.parse().ok()?;
    repo.pulls.iter().position(|p| p.number == number)
}

fn update_pull(ctx: &Ctx, repo: &mut Repo, number: &str, body: &Value) -> Reply {
    let Some(index) = find_pull(repo, number) else {
        return not_found();
    };
    if let Some(base) = body["base"].as_str()
        && !repo.refs.contains_key(&format!("heads/{base}"))
    {
        return validation_failed("PullRequest", &format!("base {base} does not exist"));
    }
    let pull = &mut repo.pulls[index];
    if let Some(title) = body["title"].as_str() {
        title.clone_into(&mut pull.title);
    }
    if let Some(text) = body.get("body") {
        pull.body = text.as_str().map(str::to_owned);
    }
    if let Some(base) = body["base"].as_str() {
        base.clone_into(&mut pull.base);
    }
    match body["state"].as_str() {
        Some("closed") => pull.open = false,
        Some("open") => pull.open = true,
        _ => {}
    }
    pull.updated = ctx.time;
    let pull = &repo.pulls[index];
    (StatusCode::OK, render_pull(ctx, repo, pull))
}

fn add_labels(ctx: &Ctx, repo: &mut Repo, number: &str, body: &Value) -> Reply {
    let Some(index) = find_pull(repo, number) else {
        return not_found();
    };
    let names: Vec<String> = match body {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => body["labels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    };
    for name in names {
        if !repo.pulls[index].labels.contains(&name) {
            repo.pulls[index].labels.push(name);
        }
    }
    let labels: Vec<Value> = repo.pulls[index]
        .labels
        .iter()
        .map(|l| render_label(ctx, repo, l))
        .collect();
    (StatusCode::OK, Value::Array(labels))
}

fn render_comment(ctx: &Ctx, repo: &Repo, comment: &Comment) -> Value {
    json!({
        "id": comment.id,
        "node_id": format!("IC_{}", comment.id),
        "url": format!("{}/issues/comments/{}", repo_api(ctx, repo), comment.id),
        "html_url": format!("{}/{}/{}/pull/{}#issuecomment-{}", ctx.origin, repo.owner, repo.name, comment.issue, comment.id),
        "issue_url": format!("{}/issues/{}", repo_api(ctx, repo), comment.issue),
        "body": comment.body,
        "user": render_owner(ctx, "tagpin-bot"),
        "created_at": timestamp(comment.created),
        "updated_at": timestamp(comment.created),
        "author_association": "OWNER",
    })
}

fn create_comment(ctx: &Ctx, repo: &mut Repo, number: &str, body: &Value) -> Reply {
    let Some(index) = find_pull(repo, number) else {
        return not_found();
    };
    let Some(text) = body["body"].as_str() else {
        return unprocessable("Invalid request.\n\n\"body\" wasn't supplied.");
    };
    let comment = Comment {
        id: ctx.id,
        issue: repo.pulls[index].number,
        body: text.to_owned(),
        created: ctx.time,
    };
    let value = render_comment(ctx, repo, &comment);
    repo.comments.push(comment);
    (StatusCode::CREATED, value)
}
