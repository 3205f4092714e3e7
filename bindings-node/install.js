#!/usr/bin/env node
// The package's `install` script.
//
// In a published package (no Rust sources beside it) it only checks that a prebuilt addon is
// there: the platform package (`flakery-linux-x64-gnu`, ...) that npm installs from
// `optionalDependencies`, or a `flakery.<platform>.node` beside index.js. When none is, it
// fails with a message that says how to build from source, instead of leaving a package that
// throws at `require`.
//
// In a clone of the repository (bindings-node/Cargo.toml present) it builds the native addon
// with cargo and puts it where the napi-rs loader (index.js) looks for it,
// `<package root>/flakery.<platform>.node`. That needs only Node and Rust (cargo), not
// @napi-rs/cli: a package installed as a dependency gets no devDependencies. `npm run build`
// (napi build) does the same build and also regenerates index.js and index.d.ts, which are
// committed.
//
// FLAKERY_SKIP_NATIVE_BUILD=1 skips both (for a loader pointed elsewhere with
// NAPI_RS_NATIVE_LIBRARY_PATH). CARGO and CARGO_TARGET_DIR are honoured as cargo honours them.
'use strict'

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = path.resolve(__dirname, '..')
const crate = 'flakery-node'

function fail(message) {
  console.error(`\nflakery: ${message}\n`)
  process.exit(1)
}

function isMusl() {
  if (process.platform !== 'linux') return false
  try {
    const report = process.report && process.report.getReport()
    const header = typeof report === 'string' ? JSON.parse(report).header : report && report.header
    if (header) return !header.glibcVersionRuntime
  } catch (e) {
    // fall through
  }
  try {
    return fs.readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch (e) {
    return false
  }
}

// The suffix the generated loader (index.js) asks for on this platform.
function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const libc = isMusl() ? 'musl' : 'gnu'
    if (arch === 'arm') return `linux-arm-${libc === 'musl' ? 'musleabihf' : 'gnueabihf'}`
    if (arch === 'loong64' || arch === 'riscv64' || arch === 'x64' || arch === 'arm64') {
      return `linux-${arch}-${libc}`
    }
    if (arch === 'ppc64' || arch === 's390x') return `linux-${arch}-gnu`
  }
  if (platform === 'darwin' && (arch === 'x64' || arch === 'arm64')) return `darwin-${arch}`
  if (platform === 'win32' && (arch === 'x64' || arch === 'arm64' || arch === 'ia32')) {
    return `win32-${arch}-msvc`
  }
  if (platform === 'freebsd' && (arch === 'x64' || arch === 'arm64')) return `freebsd-${arch}`
  return null
}

// Whether the loader will find a prebuilt addon for this platform.
function prebuiltPresent(suffix) {
  if (fs.existsSync(path.join(root, `flakery.${suffix}.node`))) return true
  try {
    require.resolve(`flakery-${suffix}/package.json`, { paths: [root] })
    return true
  } catch (e) {
    return false
  }
}

function checkPrebuilt(suffix) {
  if (suffix && prebuiltPresent(suffix)) return
  const platform = suffix || `${process.platform}-${process.arch}`
  fail(
    `no prebuilt native addon for ${platform}: the package flakery-${platform} is not ` +
      'installed (there is none for this platform, or optional dependencies were left out, ' +
      'as with --omit=optional or --no-optional).\n' +
      'Build from source instead: install Rust (https://rustup.rs), clone the flakery ' +
      'repository, and run `npm install` in the clone (it builds the addon with cargo), or ' +
      '`npm install /path/to/the/clone` from your project.',
  )
}

function findCargo() {
  const candidates = []
  if (process.env.CARGO) candidates.push(process.env.CARGO)
  candidates.push('cargo')
  const home = process.env.CARGO_HOME || path.join(os.homedir(), '.cargo')
  candidates.push(path.join(home, 'bin', process.platform === 'win32' ? 'cargo.exe' : 'cargo'))
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['--version'], { stdio: 'ignore' })
    if (probe.status === 0) return candidate
  }
  fail(
    'building the native addon needs Rust: cargo was not found on PATH nor in ~/.cargo/bin.\n' +
      'Install Rust (https://rustup.rs, or your system package manager), then run npm install again.',
  )
}

function main() {
  if (process.env.FLAKERY_SKIP_NATIVE_BUILD === '1') {
    console.error('flakery: FLAKERY_SKIP_NATIVE_BUILD=1, not building the native addon')
    return
  }
  const suffix = platformSuffix()
  if (!fs.existsSync(path.join(root, 'bindings-node', 'Cargo.toml'))) {
    checkPrebuilt(suffix)
    return
  }
  if (!suffix) fail(`no native build is set up for ${process.platform}-${process.arch}`)
  const cargo = findCargo()
  console.error(`flakery: building the native addon (cargo build --release -p ${crate}) ...`)
  const build = spawnSync(
    cargo,
    ['build', '--release', '-p', crate, '--message-format=json-render-diagnostics'],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024 },
  )
  if (build.error) fail(`could not run cargo: ${build.error.message}`)
  if (build.status !== 0) fail(`cargo build failed (exit ${build.status}); its messages are above`)

  // The library cargo made, from its own messages (whatever the target directory is).
  let library = null
  for (const line of build.stdout.toString('utf8').split('\n')) {
    if (!line.startsWith('{')) continue
    let message
    try {
      message = JSON.parse(line)
    } catch (e) {
      continue
    }
    if (
      message.reason === 'compiler-artifact' &&
      message.target &&
      message.target.name === crate.replace(/-/g, '_') &&
      message.target.kind.includes('cdylib')
    ) {
      library = message.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || library
    }
  }
  if (!library) fail('cargo built nothing that looks like the addon library')

  // Copy beside, then rename over: a process that has the old addon loaded keeps its mapping.
  const target = path.join(root, `flakery.${suffix}.node`)
  const temporary = `${target}.${process.pid}.tmp`
  fs.copyFileSync(library, temporary)
  fs.renameSync(temporary, target)
  console.error(`flakery: native addon ready: ${path.relative(process.cwd(), target) || target}`)

  // Installed as a copy inside node_modules (npm install --install-links, or from a
  // tarball), the ~100 MB of build products are of no further use: remove them. A clone
  // (npm install at its root, or linked from another project) keeps them for the next build.
  const ownTarget = path.join(root, 'target')
  if (
    !process.env.CARGO_TARGET_DIR &&
    root.split(path.sep).includes('node_modules') &&
    library.startsWith(ownTarget + path.sep)
  ) {
    fs.rmSync(ownTarget, { recursive: true, force: true })
  }
}

main()
