"""What CANN's operators are: dtypes, the curated operator table, the public headers
read without libraries, each operator's roles, and the catalog of call signatures.

Pure description: nothing here allocates, launches or owns a device resource.
"""
