#!/usr/bin/python3
"""Checks inventory JSON against the Inventory definitions of
assisted-service's swagger.yaml: every key must be a property of its
definition (unknown key = failure), every value of the declared type,
every enum string one of the declared values.

Usage: check-schema.py SWAGGER [--definition NAME] FILE|- ...
With no FILE, runs $CRADLE_BINARY inventory and checks its output."""
import json
import os
import subprocess
import sys

import yaml

errors = []


def resolve(spec, schema):
    while "$ref" in schema:
        schema = spec["definitions"][schema["$ref"].split("/")[-1]]
    return schema


def check(spec, schema, value, where):
    schema = resolve(spec, schema)
    if value is None:
        # Go's nil slices and pointers serialize as null
        if schema.get("type") in ("array", "object", None):
            return
        errors.append(f"{where}: null for a {schema.get('type')}")
        return
    t = schema.get("type")
    if t == "object" or (t is None and "properties" in schema):
        if not isinstance(value, dict):
            errors.append(f"{where}: expected an object, got {type(value).__name__}")
            return
        props = schema.get("properties", {})
        for k, v in value.items():
            if k not in props:
                errors.append(f"{where}: unknown key '{k}'")
                continue
            check(spec, props[k], v, f"{where}.{k}")
        for k in schema.get("required", []):
            if k not in value:
                errors.append(f"{where}: missing required '{k}'")
    elif t == "array":
        if not isinstance(value, list):
            errors.append(f"{where}: expected an array, got {type(value).__name__}")
            return
        for i, v in enumerate(value):
            check(spec, schema["items"], v, f"{where}[{i}]")
    elif t == "string":
        if not isinstance(value, str):
            errors.append(f"{where}: expected a string, got {type(value).__name__}")
        elif "enum" in schema and value not in schema["enum"]:
            errors.append(f"{where}: '{value}' not in {schema['enum']}")
    elif t == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(f"{where}: expected an integer, got {value!r}")
        elif schema.get("format") == "int32" and not -2**31 <= value < 2**31:
            errors.append(f"{where}: {value} out of int32 range")
    elif t == "number":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            errors.append(f"{where}: expected a number, got {value!r}")
    elif t == "boolean":
        if not isinstance(value, bool):
            errors.append(f"{where}: expected a boolean, got {value!r}")
    else:
        errors.append(f"{where}: schema type {t} not handled")


def main():
    args = sys.argv[1:]
    spec = yaml.safe_load(open(args.pop(0)))
    definition = "inventory"
    if args and args[0] == "--definition":
        definition = args[1]
        args = args[2:]
    docs = []
    if not args:
        out = subprocess.run([os.environ["CRADLE_BINARY"], "inventory"], check=True,
                             stdout=subprocess.PIPE).stdout
        docs.append(("cradle inventory", json.loads(out)))
    for a in args:
        docs.append((a, json.load(sys.stdin if a == "-" else open(a))))
    schema = {"$ref": "#/definitions/" + definition}
    for name, doc in docs:
        items = doc if isinstance(doc, list) and definition != "inventory" else [doc]
        for i, item in enumerate(items):
            check(spec, schema, item, f"{os.path.basename(name)}[{i}]")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print(f"ok: {len(docs)} documents against '{definition}'")


main()
