"""Builds a Zotero data directory: zotero.sqlite with the tables Zotero
uses (items, itemTypes, fields, itemData, itemDataValues, creators,
itemCreators, collections, collectionItems, tags, itemTags,
itemAttachments, deletedItems), storage/ with the attachment files, and
Better BibTeX's better-bibtex.sqlite."""

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL, dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT, UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1, orderIndex INT NOT NULL DEFAULT 0,
  PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex));
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL, parentCollectionID INT DEFAULT NULL,
  clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0,
  synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (collectionID, itemID));
CREATE TABLE tags (tagID INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE itemTags (itemID INT NOT NULL, tagID INT NOT NULL, type INT NOT NULL, PRIMARY KEY (itemID, tagID));
CREATE TABLE itemAttachments (itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT, charsetID INT, path TEXT,
  syncState INT DEFAULT 0, storageModTime INT, storageHash TEXT, lastProcessedModificationTime INT);
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
"""

TYPES = {"journalArticle": 22, "book": 7, "attachment": 3, "note": 28}
FIELDS = {"title": 1, "abstractNote": 2, "date": 6, "url": 13, "extra": 16, "DOI": 59, "publicationTitle": 38, "language": 87, "citationKey": 120}


class Zotero:
    def __init__(self, root: Path):
        self.root = root
        (root / "storage").mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(root / "zotero.sqlite")
        self.db.executescript(SCHEMA)
        self.db.executemany("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)", [(v, k) for k, v in TYPES.items()])
        self.db.executemany("INSERT INTO fields (fieldID, fieldName) VALUES (?, ?)", [(v, k) for k, v in FIELDS.items()])
        self.next_id = 1
        self.collections = {}

    @classmethod
    def reopen(cls, root: Path):
        """The fixture's database again, to edit it."""
        z = cls.__new__(cls)
        z.root = root
        z.db = sqlite3.connect(root / "zotero.sqlite")
        return z

    def _item(self, type_name, key):
        item_id = self.next_id
        self.next_id += 1
        self.db.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, ?, 1, ?)", (item_id, TYPES[type_name], key))
        return item_id

    def _field(self, item_id, name, value):
        self.db.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", (value,))
        (value_id,) = self.db.execute("SELECT valueID FROM itemDataValues WHERE value = ?", (value,)).fetchone()
        self.db.execute("INSERT OR REPLACE INTO itemData VALUES (?, ?, ?)", (item_id, FIELDS[name], value_id))

    def collection(self, name, parent=None):
        cid = len(self.collections) + 1
        self.db.execute("INSERT INTO collections (collectionID, collectionName, parentCollectionID, libraryID, key) VALUES (?, ?, ?, 1, ?)",
                        (cid, name, self.collections.get(parent), f"COLL{cid:04d}"))
        self.collections[name] = cid
        return cid

    def item(self, key, fields, creators=(), tags=(), collections=(), type_name="journalArticle"):
        item_id = self._item(type_name, key)
        for name, value in fields.items():
            self._field(item_id, name, value)
        for order, (first, last) in enumerate(creators):
            self.db.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, 0)", (first, last))
            (cid,) = self.db.execute("SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ?", (first, last)).fetchone()
            self.db.execute("INSERT INTO itemCreators VALUES (?, ?, 1, ?)", (item_id, cid, order))
        for tag in tags:
            self.db.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (tag,))
            (tid,) = self.db.execute("SELECT tagID FROM tags WHERE name = ?", (tag,)).fetchone()
            self.db.execute("INSERT INTO itemTags VALUES (?, ?, 0)", (item_id, tid))
        for name in collections:
            self.db.execute("INSERT INTO collectionItems VALUES (?, ?, 0)", (self.collections[name], item_id))
        return item_id

    def attach(self, parent_id, key, name, data, content_type="application/pdf"):
        item_id = self._item("attachment", key)
        folder = self.root / "storage" / key
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        self.db.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, 0, ?, ?)",
                        (item_id, parent_id, content_type, f"storage:{name}"))
        return item_id

    def delete(self, item_id):
        self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))

    def set_field(self, item_id, name, value):
        self._field(item_id, name, value)
        self.db.execute("UPDATE items SET dateModified = datetime('now', '+1 minute') WHERE itemID = ?", (item_id,))

    def better_bibtex(self, keys):
        bbt = sqlite3.connect(self.root / "better-bibtex.sqlite")
        bbt.execute("CREATE TABLE citationkey (itemID INT NOT NULL, itemKey TEXT NOT NULL, libraryID INT NOT NULL, citationKey TEXT NOT NULL, pinned INT DEFAULT 0)")
        bbt.executemany("INSERT INTO citationkey VALUES (?, ?, 1, ?, 0)", keys)
        bbt.commit()
        bbt.close()

    def close(self):
        self.db.commit()
        self.db.close()
