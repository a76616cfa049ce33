-- Source distributions (PEP 625 .tar.gz) beside wheels. A file row says which it is, by the names
-- twine's upload form and Warehouse's JSON use. An sdist's row carries no wheel tags
-- (python_tag, abi_tag and platform_tag are '') and no variant: the variant indexes leave it out
-- for projects whose builds carry a variant (lib/wheelhouse/variants/variant_view.cpp).

ALTER TABLE files ADD COLUMN packagetype TEXT NOT NULL DEFAULT 'bdist_wheel'
    CHECK (packagetype IN ('bdist_wheel', 'sdist'));
