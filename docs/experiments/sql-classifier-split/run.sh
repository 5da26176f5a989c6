#!/bin/sh
# Compares the split SqlClassifier with the single class of commit 79f062e (see ClassifierDiff.java).
# Run from the repository root after `./mvnw -q -o -pl fencing-jdbc -am -DskipTests package`.
set -eu
here=docs/experiments/sql-classifier-split
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/dev/fencing/jdbc"
git show 79f062e:fencing-jdbc/src/main/java/dev/fencing/jdbc/SqlClassifier.java \
  | sed 's/SqlClassifier/OldSqlClassifier/g' > "$work/src/dev/fencing/jdbc/OldSqlClassifier.java"
cp "$here/ClassifierDiff.java" "$work/src/dev/fencing/jdbc/"
jspecify=$(find "${HOME}/.m2/repository/org/jspecify/jspecify" -name 'jspecify-*.jar' | head -1)
cp=fencing-jdbc/target/classes:$jspecify
javac -cp "$cp" -d "$work/classes" "$work"/src/dev/fencing/jdbc/*.java
java -cp "$work/classes:$cp" dev.fencing.jdbc.ClassifierDiff fencing-jdbc/src/test/java/dev/fencing/jdbc/*Test.java
