"""A tiny deterministic provider written with PyPI's `tf` framework, used by
terrane's differential tests as the same plugin binary for Terraform and
terrane.

kv_item: `key` (required, forces replacement), `value` (optional),
`id` (computed: "kv-" + key) and `revision` (computed: 1 on create, +1 on
every in-place update, unknown while an update is planned). A create whose
value is "fail-on-create" returns the object together with an error, which
is how a tool ends up with a tainted instance. Import takes the key as ID.

A delete fails while a file named `kv-fail-delete` exists in the working
directory the provider runs in (the scenario's), which is how a tool ends
up with a deposed object.

kv_lookup (data source): `key` in, `value` out ("value-of-" + key).

kv_versioned: a resource whose schema version is read from the file
`kv-schema-version` in the working directory (0 when absent), so a scenario
can raise it between steps. Version 0 has `name` and `size_gb`; version 1
renamed `size_gb` to `size_mb` and upgrades version-0 state (size * 1024).
`id` (computed) is "v-" + name.
"""
import os
from typing import Optional, Type

from tf import schema, types
from tf.iface import (
    Config,
    CreateContext,
    DataSource,
    DeleteContext,
    ImportContext,
    PlanContext,
    ReadContext,
    ReadDataContext,
    Resource,
    State,
    UpdateContext,
    UpgradeContext,
)
from tf.provider import Provider
from tf.runner import run_provider
from tf.types import Unknown
from tf.utils import Diagnostics


class KvProvider(Provider):
    def __init__(self):
        self.configured = False

    def full_name(self) -> str:
        return "example.com/terrane/kv"

    def get_model_prefix(self) -> str:
        return "kv_"

    def get_provider_schema(self, diags: Diagnostics) -> schema.Schema:
        return schema.Schema(attributes=[schema.Attribute("prefix", types.String(), optional=True)])

    def validate_config(self, diags: Diagnostics, config: Config):
        pass

    def configure_provider(self, diags: Diagnostics, config: Config):
        self.configured = True

    def get_data_sources(self) -> list[Type[DataSource]]:
        return [KvLookup]

    def get_resources(self) -> list[Type[Resource]]:
        return [KvItem, KvVersioned]


class KvItem(Resource):
    def __init__(self, provider: KvProvider):
        self.provider = provider

    @classmethod
    def get_name(cls) -> str:
        return "item"

    @classmethod
    def get_schema(cls) -> schema.Schema:
        return schema.Schema(
            attributes=[
                schema.Attribute("key", types.String(), required=True, requires_replace=True),
                schema.Attribute("value", types.String(), optional=True),
                schema.Attribute("id", types.String(), computed=True),
                schema.Attribute("revision", types.Number(), computed=True),
            ]
        )

    def plan(self, ctx: PlanContext, current: Optional[State], planned: State) -> Optional[State]:
        if current is not None and ctx.changed_fields:
            planned["revision"] = Unknown
        return planned

    def create(self, ctx: CreateContext, planned: State) -> Optional[State]:
        state = dict(planned)
        state["id"] = "kv-" + planned["key"]
        state["revision"] = 1
        if planned.get("value") == "fail-on-create":
            ctx.diagnostics.add_error("kv_item create failed", "the value asked this create to fail")
        return state

    def read(self, ctx: ReadContext, current: State) -> Optional[State]:
        return current

    def update(self, ctx: UpdateContext, current: State, planned: State) -> Optional[State]:
        state = dict(planned)
        state["id"] = current["id"]
        state["revision"] = (current.get("revision") or 0) + 1
        return state

    def delete(self, ctx: DeleteContext, current: State):
        if os.path.exists("kv-fail-delete"):
            ctx.diagnostics.add_error("kv_item delete failed", "the file kv-fail-delete asked this delete to fail")
        return None

    def import_(self, ctx: ImportContext, id: str) -> Optional[State]:
        return {"key": id, "value": None, "id": "kv-" + id, "revision": 1}

    def upgrade(self, ctx: UpgradeContext, version: int, old: State) -> Optional[State]:
        # The framework's default upgrade warns on every call, and Terraform
        # (1.15) skips destroying a deposed object whose state read returned
        # any diagnostic, warnings included: without this override a
        # create_before_destroy replacement kept its old object deposed.
        return old


def schema_version() -> int:
    try:
        with open("kv-schema-version") as f:
            return int(f.read().strip())
    except FileNotFoundError:
        return 0


class KvVersioned(Resource):
    def __init__(self, provider: KvProvider):
        self.provider = provider

    @classmethod
    def get_name(cls) -> str:
        return "versioned"

    @classmethod
    def get_schema(cls) -> schema.Schema:
        size = "size_gb" if schema_version() == 0 else "size_mb"
        return schema.Schema(
            version=schema_version(),
            attributes=[
                schema.Attribute("name", types.String(), required=True, requires_replace=True),
                schema.Attribute(size, types.Number(), optional=True),
                schema.Attribute("id", types.String(), computed=True),
            ],
        )

    def create(self, ctx: CreateContext, planned: State) -> Optional[State]:
        state = dict(planned)
        state["id"] = "v-" + planned["name"]
        return state

    def read(self, ctx: ReadContext, current: State) -> Optional[State]:
        return current

    def update(self, ctx: UpdateContext, current: State, planned: State) -> Optional[State]:
        state = dict(planned)
        state["id"] = current["id"]
        return state

    def delete(self, ctx: DeleteContext, current: State):
        return None

    def upgrade(self, ctx: UpgradeContext, version: int, old: State) -> Optional[State]:
        if version == 0 and schema_version() == 1:
            gb = old.pop("size_gb", None)
            old["size_mb"] = None if gb is None else gb * 1024
            return old
        if version != schema_version():
            ctx.diagnostics.add_error(
                "Unable to upgrade kv_versioned state",
                f"no upgrade from schema version {version} to {schema_version()}",
            )
        return old


class KvLookup(DataSource):
    def __init__(self, provider: KvProvider):
        self.provider = provider

    @classmethod
    def get_name(cls) -> str:
        return "lookup"

    @classmethod
    def get_schema(cls) -> schema.Schema:
        return schema.Schema(
            attributes=[
                schema.Attribute("key", types.String(), required=True),
                schema.Attribute("value", types.String(), computed=True),
            ]
        )

    def read(self, ctx: ReadDataContext, config: Config) -> Optional[State]:
        return {"key": config["key"], "value": "value-of-" + config["key"]}


if __name__ == "__main__":
    run_provider(KvProvider())
