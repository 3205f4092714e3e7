# nginx, the ceiling the server benchmarks compare `flakery serve` with: `body` (flakery's
# answer, so the same length) at /v1/id, application/json, a worker a core, keep-alive, no
# logging. Sourced by bench/server/run.sh and compare.sh; sets nginx_pid, and returns once
# nginx answers.
start_nginx() { # DIR PORT BODY
  local dir="$1" port="$2" body="$3"
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<CONF
worker_processes $(nproc);
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  server {
    listen 127.0.0.1:$port;
    location = /v1/id { default_type application/json; return 200 '$body'; }
  }
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf" &
  nginx_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/v1/id" >/dev/null 2>&1 && break; sleep 0.1; done
}
