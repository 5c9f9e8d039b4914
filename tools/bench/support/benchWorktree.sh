#!/bin/bash
# benchWorktree.sh COMMIT [DIR]: a git worktree of COMMIT (default DIR: ../wt-COMMIT) that shares this checkout's
# node_modules, so a bench of an older version runs beside the current one without a second npm install. Every
# entry of node_modules is linked except @svc, whose relative workspace links are copied so they point inside the
# worktree. Remove it with `git worktree remove --force DIR`.
set -euo pipefail
commit=$1
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${2:-$root/../wt-$commit}
git -C "$root" worktree add -q "$dir" "$commit"
mkdir "$dir/node_modules"
for entry in "$root"/node_modules/* "$root"/node_modules/.[!.]*; do
  name=$(basename "$entry")
  [ "$name" = "@svc" ] || [ -e "$dir/node_modules/$name" ] || ln -s "$entry" "$dir/node_modules/$name"
done
cp -a "$root/node_modules/@svc" "$dir/node_modules/@svc"
echo "$dir"
