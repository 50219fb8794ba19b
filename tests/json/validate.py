#!/usr/bin/env python3
"""Validates one `gpusched ... --json` document (stdin) against docs/json-schema.json.

Usage: validate.py SCHEMA < DOCUMENT. Exit 0 when it is valid; 1, with every error on
stderr (where in the document, and what is wrong), when it is not; 2 when it is no JSON.
"""
import json
import sys

import jsonschema


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as schema_file:
        schema = json.load(schema_file)
    try:
        document = json.load(sys.stdin)
    except json.JSONDecodeError as error:
        print(f"not JSON: {error}", file=sys.stderr)
        return 2
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        print(f"{where}: {error.message}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
