"""Models with learner-facing text in every language: `Localized` keeps English in its fields and the other
languages in `translations`; `localized(model, lang)` gives a copy in one language (judge/reports/report.py's
models)."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from pydantic import BaseModel, Field, model_validator

from judge.reports.i18n import OTHER_LANGS, SOURCE_LANG, T


class Localized(BaseModel):
    """A model with learner-facing text: its `TEXT_FIELDS` hold English, `translations` the other languages.

    Pass a `judge.reports.i18n.T` for a text field (when constructing, or through `set_text`): the English goes to
    the field, every translation into `translations`. `localized(lang)` gives the model in one language."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ()
    translations: dict[str, dict[str, str]] = Field(
        {}, description="The text fields in languages other than English: {lang: {field: text}}.")

    @model_validator(mode="before")
    @classmethod
    def _split_texts(cls, data):
        if isinstance(data, dict) and any(isinstance(v, T) for v in data.values()):
            data = dict(data)
            translations = {lang: dict(fields) for lang, fields in (data.get("translations") or {}).items()}
            for name, value in list(data.items()):
                if isinstance(value, T):
                    data[name] = value.render(SOURCE_LANG)
                    _store(translations, name, value)
            data["translations"] = translations
        return data

    def set_text(self, name: str, value) -> None:
        """Set a text field to a T (or a plain string, which has no translation)."""
        rendered: dict = {}
        if isinstance(value, T):  # rendered first: `value` may be built from this very field
            _store(rendered, name, value)
            value = value.render(SOURCE_LANG)
        for fields in self.translations.values():
            fields.pop(name, None)
        for lang, fields in rendered.items():
            self.translations.setdefault(lang, {}).update(fields)
        setattr(self, name, value)

    def text(self, name: str) -> T:
        """Field `name` as a T in every language it has (to build a longer message from it)."""
        return T.of(self, name)

    def text_or_english(self, name: str) -> T:
        """Field `name` as a T; its English in every language where it lacks another (text the runner wrote)."""
        if all(name in self.translations.get(lang, {}) for lang in OTHER_LANGS):
            return self.text(name)
        return T.same(str(getattr(self, name) or ""))

    def missing_texts(self, lang: str) -> list[str]:
        """The text fields (here and in nested models) that are not empty and have no `lang` text."""
        missing = [name for name in self.TEXT_FIELDS
                   if getattr(self, name) and name not in self.translations.get(lang, {})]
        for name, value in self:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Localized):
                    missing += [f"{name}.{m}" for m in item.missing_texts(lang)]
        return missing


def _store(translations: dict, name: str, value: T) -> None:
    for lang in OTHER_LANGS:
        rendered = value.render(lang)
        if rendered is not None:
            translations.setdefault(lang, {})[name] = rendered


ModelT = TypeVar("ModelT", bound=BaseModel)


def localized(model: ModelT, lang: str) -> ModelT:
    """A copy of `model` (and the models in it) with every text field in `lang`, where it has that text."""
    updates = {}
    for name, value in model:
        if isinstance(value, BaseModel):
            updates[name] = localized(value, lang)
        elif isinstance(value, list) and any(isinstance(v, BaseModel) for v in value):
            updates[name] = [localized(v, lang) if isinstance(v, BaseModel) else v for v in value]
    if isinstance(model, Localized) and lang != SOURCE_LANG:
        updates.update(model.translations.get(lang, {}))
    return model.model_copy(update=updates)
