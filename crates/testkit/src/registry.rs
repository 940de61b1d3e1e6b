use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use tempfile::TempDir;

/// Overrides the registry binary (default `/usr/bin/docker-registry`, then `docker-registry` on
/// `PATH`).
pub const REGISTRY_BIN_ENV: &str = "TAGPIN_TEST_REGISTRY_BIN";

const DEFAULT_BIN: &str = "/usr/bin/docker-registry";

const INSTALL_HINT: &str = "install it with `scripts/test` (which installs what is missing), or \
`sudo apt-get install docker-registry apache2-utils`; elsewhere put distribution 2.8's `registry` \
binary on PATH as `docker-registry` or set TAGPIN_TEST_REGISTRY_BIN to it";

/// How long the registry may take to answer `/v2/`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(15);

/// A `docker-registry serve` process on a free `127.0.0.1` port with a temporary filesystem
/// store; killed on drop.
pub struct TestRegistry {
    child: Child,
    addr: SocketAddr,
    dir: TempDir,
    pub(crate) auth: RegistryAuth,
    pub(crate) client: oci_client::Client,
    /// Repositories oci-client holds push credentials for.
    pub(crate) authenticated: Mutex<HashSet<String>>,
}

impl TestRegistry {
    /// Starts an anonymous registry (pull and push without credentials).
    pub async fn start() -> Self {
        Self::start_inner(None).await
    }

    /// Starts a registry that requires HTTP Basic auth for `user` with `password` (htpasswd).
    pub async fn start_with_htpasswd(user: &str, password: &str) -> Self {
        Self::start_inner(Some((user, password))).await
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The registry's log file (its stdout and stderr).
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("registry.log")
    }

    async fn start_inner(htpasswd: Option<(&str, &str)>) -> Self {
        let bin = registry_bin();
        let dir = tempfile::tempdir().expect("create a temporary directory for the registry");
        let auth = match htpasswd {
            Some((user, password)) => {
                write_htpasswd(&dir.path().join("htpasswd"), user, password);
                RegistryAuth::Basic(user.to_owned(), password.to_owned())
            }
            None => RegistryAuth::Anonymous,
        };
        let mut last_log = String::new();
        for _ in 0..5 {
            let addr = free_port();
            let config = dir.path().join("config.yml");
            fs::write(&config, config_yaml(dir.path(), addr, htpasswd.is_some()))
                .expect("write the registry config");
            let log_path = dir.path().join("registry.log");
            let log = fs::File::create(&log_path).expect("create the registry log");
            let mut child = Command::new(&bin)
                .arg("serve")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("clone the log handle"))
                .stderr(log)
                .spawn()
                .unwrap_or_else(|error| {
                    panic!(
                        "cannot run the test registry {}: {error}; {INSTALL_HINT}",
                        bin.display()
                    )
                });
            if wait_ready(&mut child, addr).await {
                return Self {
                    child,
                    addr,
                    dir,
                    auth,
                    authenticated: Mutex::new(HashSet::new()),
                    client: oci_client::Client::new(ClientConfig {
                        protocol: ClientProtocol::Http,
                        ..ClientConfig::default()
                    }),
                };
            }
            // Most likely another process took the port between probing and binding.
            let _ = child.kill();
            let _ = child.wait();
            last_log = fs::read_to_string(&log_path).unwrap_or_default();
        }
        panic!("the test registry did not start; its log:\n{last_log}");
    }
}

/// Polls `/v2/` until the registry answers (200, or 401 with auth); false if it exited.
async fn wait_ready(child: &mut Child, addr: SocketAddr) -> bool {
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/v2/");
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(Some(_status)) = child.try_wait() {
            return false;
        }
        if let Ok(response) = client.get(&url).send().await
            && matches!(response.status().as_u16(), 200 | 401)
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn registry_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os(REGISTRY_BIN_ENV) {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "{REGISTRY_BIN_ENV}={} does not exist; {INSTALL_HINT}",
            bin.display()
        );
        return bin;
    }
    if Path::new(DEFAULT_BIN).is_file() {
        return PathBuf::from(DEFAULT_BIN);
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("docker-registry"))
            .find(|candidate| candidate.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!("the test registry `docker-registry` is not installed; {INSTALL_HINT}")
    })
}

fn write_htpasswd(path: &Path, user: &str, password: &str) {
    let output = Command::new("htpasswd")
        .args(["-Bbn", user, password])
        .output()
        .unwrap_or_else(|error| panic!("cannot run `htpasswd` ({error}); {INSTALL_HINT}"));
    assert!(
        output.status.success(),
        "htpasswd failed: {}",
        output.status
    );
    fs::write(path, output.stdout).expect("write the htpasswd file");
}

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("find a free loopback port")
}

fn config_yaml(dir: &Path, addr: SocketAddr, htpasswd: bool) -> String {
    let mut config = format!(
        "version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: {addr}
  secret: tagpin-test-secret
health:
  storagedriver:
    enabled: false
",
        root = dir.join("store").display(),
    );
    if htpasswd {
        let _ = write!(
            config,
            "auth:\n  htpasswd:\n    realm: tagpin-test\n    path: {}\n",
            dir.join("htpasswd").display()
        );
    }
    config
}
