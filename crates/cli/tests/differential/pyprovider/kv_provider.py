"""A tiny deterministic provider written with PyPI's `tf` framework, used by
terrane's differential tests as the same plugin binary for Terraform and
terrane.

kv_item: `key` (required, forces replacement), `value` (optional),
`id` (computed: "kv-" + key) and `revision` (computed: 1 on create, +1 on
every in-place update, unknown while an update is planned). A create whose
value is "fail-on-create" returns the object together with an error, which
is how a tool ends up with a tainted instance. Import takes the key as ID.

kv_lookup (data source): `key` in, `value` out ("value-of-" + key).
"""
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
        return [KvItem]


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
        return None

    def import_(self, ctx: ImportContext, id: str) -> Optional[State]:
        return {"key": id, "value": None, "id": "kv-" + id, "revision": 1}


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
