"""pydantic JSON schema -> structural schema."""

from typing import Annotated, Optional, Union

import pytest
from pydantic import BaseModel, Field, StringConstraints

from pinery.api.base import ApiModel, immutable
from pinery.schema.convert import SchemaConversionError, to_structural
from tests.unit.test_structural import check_schema


class Inner(ApiModel):
    """Inner object."""

    value: int = Field(1, gt=0, description="A value.")


class Outer(ApiModel):
    """Outer object."""

    name: str = Field(description="Name.", json_schema_extra=immutable())
    inner: Optional[Inner] = Field(None, description="Optional inner.", json_schema_extra=immutable("presence"))
    labels: Optional[dict[Annotated[str, StringConstraints(max_length=10, pattern="^[a-z]+$")], str]] = Field(
        None, description="Labels."
    )
    note: Optional[str] = Field(None, description="Note.", json_schema_extra=immutable())


def test_conversion_output():
    schema = to_structural(Outer.model_json_schema())
    assert schema["type"] == "object" and schema["description"] == "Outer object."
    assert "additionalProperties" not in schema and "title" not in schema
    inner = schema["properties"]["inner"]
    assert inner["properties"]["value"] == {
        "type": "integer", "description": "A value.", "default": 1, "minimum": 0, "exclusiveMinimum": True,
    }
    labels = schema["properties"]["labels"]
    assert labels["additionalProperties"] == {"type": "string"}
    assert labels["x-kubernetes-validations"][0]["rule"] == "self.all(k, k.matches(r'^[a-z]+$') && size(k) <= 10)"
    rules = {r["fieldPath"]: r["rule"] for r in schema["x-kubernetes-validations"]}
    assert rules[".name"] == "self.name == oldSelf.name"
    assert rules[".inner"] == "has(self.inner) == has(oldSelf.inner)"
    assert rules[".note"].startswith("has(self.note) == has(oldSelf.note) &&")
    assert check_schema(schema) == []


def test_missing_description_is_an_error():
    class NoDesc(ApiModel):
        """Doc."""

        field: int = 1

    with pytest.raises(SchemaConversionError, match="field: every field needs a description"):
        to_structural(NoDesc.model_json_schema())


def test_real_unions_are_refused():
    class Union_(BaseModel):
        """Doc."""

        v: Union[int, list[int]] = Field(description="d")

    with pytest.raises(SchemaConversionError, match="unions"):
        to_structural(Union_.model_json_schema())
