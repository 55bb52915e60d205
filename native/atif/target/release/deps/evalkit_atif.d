/work/wt/i23/native/atif/target/release/deps/evalkit_atif.d: src/lib.rs src/alloc.rs src/cols.rs src/dir.rs src/extract.rs src/ffi.rs src/finish.rs src/io.rs src/json.rs src/parse.rs src/paths.rs src/pool.rs src/probe.rs src/scan.rs src/sched.rs src/ser.rs src/shell.rs src/sniff.rs src/text.rs src/trial.rs

/work/wt/i23/native/atif/target/release/deps/libevalkit_atif.so: src/lib.rs src/alloc.rs src/cols.rs src/dir.rs src/extract.rs src/ffi.rs src/finish.rs src/io.rs src/json.rs src/parse.rs src/paths.rs src/pool.rs src/probe.rs src/scan.rs src/sched.rs src/ser.rs src/shell.rs src/sniff.rs src/text.rs src/trial.rs

/work/wt/i23/native/atif/target/release/deps/libevalkit_atif.rlib: src/lib.rs src/alloc.rs src/cols.rs src/dir.rs src/extract.rs src/ffi.rs src/finish.rs src/io.rs src/json.rs src/parse.rs src/paths.rs src/pool.rs src/probe.rs src/scan.rs src/sched.rs src/ser.rs src/shell.rs src/sniff.rs src/text.rs src/trial.rs

src/lib.rs:
src/alloc.rs:
src/cols.rs:
src/dir.rs:
src/extract.rs:
src/ffi.rs:
src/finish.rs:
src/io.rs:
src/json.rs:
src/parse.rs:
src/paths.rs:
src/pool.rs:
src/probe.rs:
src/scan.rs:
src/sched.rs:
src/ser.rs:
src/shell.rs:
src/sniff.rs:
src/text.rs:
src/trial.rs:
