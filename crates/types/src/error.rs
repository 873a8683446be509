//! Errors as MySQL reports them: a numeric code, a five-character SQLSTATE
//! and a message. Every failure a client can see is one of these, so the
//! protocol layer turns it into an ERR packet without guessing.

use std::fmt;

macro_rules! error_codes {
    ($($name:ident = $code:literal, $state:literal;)*) => {
        /// MySQL server error codes used by lockstep (names follow MySQL's ER_*).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(non_camel_case_types)]
        pub enum Code {
            $($name,)*
            /// SIGNAL/RESIGNAL in a stored program: the number and
            /// SQLSTATE it gave (see `intern_sqlstate`).
            Signal(u16, &'static str),
        }

        impl Code {
            pub fn number(self) -> u16 {
                match self { $(Code::$name => $code,)* Code::Signal(n, _) => n }
            }
            pub fn sqlstate(self) -> &'static str {
                match self { $(Code::$name => $state,)* Code::Signal(_, s) => s }
            }
        }
    };
}

error_codes! {
    DbCreateExists = 1007, "HY000";
    TooLongIdent = 1059, "42000";
    WrongDbName = 1102, "42000";
    WrongTableName = 1103, "42000";
    WrongColumnName = 1166, "42000";
    WrongNameForIndex = 1280, "42000";
    SpWrongName = 1458, "42000";
    WrongStringLength = 1470, "HY000";
    InvalidArgumentForLogarithm = 3020, "2201E";
    DbDropExists = 1008, "HY000";
    DiskFull = 1021, "HY000";
    ErrorOnWrite = 1026, "HY000";
    GetErrno = 1030, "HY000";
    ConCount = 1040, "08004";
    ServerShutdown = 1053, "08S01";
    AccessDenied = 1045, "28000";
    DbAccessDenied = 1044, "42000";
    NoDb = 1046, "3D000";
    UnknownCom = 1047, "08S01";
    BadNull = 1048, "23000";
    BadDb = 1049, "42000";
    TableExists = 1050, "42S01";
    BadTable = 1051, "42S02";
    NonUniq = 1052, "23000";
    BadField = 1054, "42S22";
    WrongFieldWithGroup = 1055, "42000";
    DupFieldName = 1060, "42S21";
    DupKeyName = 1061, "42000";
    KeyNotFound = 1032, "HY000";
    DupEntry = 1062, "23000";
    UnknownCharacterSet = 1115, "42000";
    KeyColumnDoesNotExist = 1072, "42000";
    Parse = 1064, "42000";
    EmptyQuery = 1065, "42000";
    MultiplePriKey = 1068, "42000";
    TooManyKeyParts = 1070, "42000";
    WrongAutoKey = 1075, "42000";
    CantDropFieldOrKey = 1091, "42000";
    CantRemoveAllFields = 1090, "42000";
    InvalidUseOfNull = 1138, "22004";
    WarnDataTruncated = 1265, "01000";
    TooBigSet = 1097, "HY000";
    DuplicatedValueInType = 1291, "HY000";
    IllegalValueForType = 1367, "22007";
    InvalidDefault = 1067, "42000";
    NoSuchThread = 1094, "HY000";
    UnknownError = 1105, "HY000";
    UnknownTable = 1109, "42S02";
    TableFull = 1114, "HY000";
    TooManyFields = 1117, "HY000";
    WrongValueCountOnRow = 1136, "21S01";
    TableAccessDenied = 1142, "42000";
    NoSuchTable = 1146, "42S02";
    UnknownStorageEngine = 1286, "42000";
    NetPacketTooLarge = 1153, "08S01";
    NetReadInterrupted = 1159, "08S01";
    PrimaryCantHaveNull = 1171, "42000";
    ErrorDuringCommit = 1180, "HY000";
    UnknownSystemVariable = 1193, "HY000";
    DerivedMustHaveAlias = 1248, "42000";
    LockWaitTimeout = 1205, "HY000";
    WrongArguments = 1210, "HY000";
    LockDeadlock = 1213, "40001";
    SpecificAccessDenied = 1227, "42000";
    IncorrectGlobalLocalVar = 1238, "HY000";
    LocalVariable = 1228, "HY000";
    GlobalVariable = 1229, "HY000";
    WrongValueForVar = 1231, "42000";
    WrongTypeForVar = 1232, "42000";
    NotSupportedYet = 1235, "42000";
    SpAlreadyExists = 1304, "42000";
    SpBadSqlstate = 1407, "42000";
    SpUndeclaredVar = 1327, "42000";
    SpLilabelMismatch = 1308, "42000";
    SpNoReturnFound = 1320, "42000";
    SpBadReturn = 1313, "42000";
    SpNoReturn = 1321, "2F005";
    SpFetchNoData = 1329, "02000";
    SpWrongNoOfFetchArgs = 1328, "HY000";
    TooManyRows = 1172, "42000";
    LockNowait = 3572, "HY000";
    WrongNumberOfColumnsInSelect = 1222, "21000";
    SpCaseNotFound = 1339, "20000";
    SpCursorNotOpen = 1326, "24000";
    SpCursorAlreadyOpen = 1325, "24000";
    SpCursorMismatch = 1324, "42000";
    SpCondMismatch = 1319, "42000";
    SpWrongNoOfArgs = 1318, "42000";
    SpNotVarArg = 1414, "42000";
    SpNoRetset = 1415, "0A000";
    SpRecursionLimit = 1456, "HY000";
    SpNoRecursion = 1424, "HY000";
    TooBigScale = 1425, "42000";
    TooBigPrecision = 1426, "42000";
    MBiggerThanD = 1427, "42000";
    UnknownTimeZone = 1298, "HY000";
    SpBadstatement = 1314, "0A000";
    CommitNotAllowedInSfOrTrg = 1422, "HY000";
    StmtNotAllowedInSfOrTrg = 1336, "0A000";
    SignalException = 1644, "HY000";
    ResignalWithoutActiveHandler = 1645, "0K000";
    TrgAlreadyExists = 1359, "HY000";
    ReferencedTrgDoesNotExist = 3011, "HY000";
    TrgDoesNotExist = 1360, "HY000";
    TrgOnViewOrTempTable = 1361, "HY000";
    TrgCantChangeRow = 1362, "HY000";
    TrgNoSuchRowInTrg = 1363, "HY000";
    TrgInWrongSchema = 1435, "HY000";
    CantUpdateUsedTableInSfOrTrg = 1442, "HY000";
    ProcaccessDenied = 1370, "42000";
    OperandColumns = 1241, "21000";
    CollationCharsetMismatch = 1253, "42000";
    UnknownCollation = 1273, "HY000";
    SubqueryMoreThanOneRow = 1242, "21000";
    UnknownStmtHandler = 1243, "HY000";
    WarnDataOutOfRange = 1264, "22003";
    TruncatedWrongValue = 1292, "22007";
    OptionPrevents = 1290, "HY000";
    WrongFieldTerminators = 1083, "42000";
    CutValueGroupConcat = 1260, "HY000";
    WarnTooFewRecords = 1261, "01000";
    WarnTooManyRecords = 1262, "01000";
    WarnNullToNotnull = 1263, "22004";
    ClientLocalFilesDisabled = 3948, "42000";
    UnsupportedPs = 1295, "HY000";
    QueryInterrupted = 1317, "70100";
    NoDefaultForField = 1364, "HY000";
    DivisionByZero = 1365, "22012";
    TruncatedWrongValueForField = 1366, "HY000";
    InvalidCharacterString = 1300, "HY000";
    DataTooLong = 1406, "22001";
    OutOfSortMemory = 1038, "HY001";
    OutOfResources = 1041, "HY000";
    RecursionLimit = 3636, "HY000";
    QueryTimeout = 3024, "HY000";
    DataOutOfRange = 1690, "22003";
    WrongValueForType = 1411, "HY000";
    UnknownLocale = 1649, "HY000";
    ZlibDataError = 1259, "HY000";
    TooBigForUncompress = 1256, "HY000";
    RegexpIllegalArgument = 3685, "HY000";
    RegexpIndexOutOfBounds = 3686, "HY000";
    RegexpRuleSyntax = 3688, "HY000";
    RegexpMismatchedParen = 3691, "HY000";
    RegexpMissingCloseBracket = 3696, "HY000";
    RegexpPatternTooBig = 3700, "HY000";
    WrongParamcountToNativeFct = 1582, "42000";
    KillDenied = 1095, "HY000";
    MixOfGroupFuncAndFields = 1140, "42000";
    NonexistingGrant = 1141, "42000";
    IllegalGrantForTable = 1144, "42000";
    NonexistingTableGrant = 1147, "42000";
    WrongUsage = 1221, "HY000";
    OperationFailed = 1396, "HY000";
    AccountHasBeenLocked = 3118, "HY000";
    UnknownAuthid = 3523, "HY000";
    RoleNotGranted = 3530, "HY000";
    MandatoryRole = 3628, "HY000";
    RoleGrantedToItself = 4027, "HY000";
    CantCreateUserWithGrant = 1410, "42000";
    PluginIsNotLoaded = 1524, "HY000";
    WrongValue = 1525, "HY000";
    SecureTransportRequired = 3159, "HY000";
    VariableIsReadonly = 1621, "HY000";
    TooLongTableComment = 1628, "HY000";
    TooLongFieldComment = 1629, "HY000";
    TooLongIndexComment = 1688, "HY000";
    ReadOnlyTransaction = 1792, "25006";
    UpdateWithoutKeyInSafeMode = 1175, "HY000";
    KeyDoesNotExist = 1176, "42000";
    UnknownExplainFormat = 1791, "HY000";
    LockOrActiveTransaction = 1192, "HY000";
    TableNotLockedForWrite = 1099, "HY000";
    TableNotLocked = 1100, "HY000";
    CantUpdateWithReadlock = 1223, "HY000";
    CantChangeTxCharacteristics = 1568, "25001";
    CapacityExceeded = 3170, "HY000";
    OnlineLogTooBig = 1799, "HY000";
    UnknownAlterAlgorithm = 1800, "HY000";
    UnknownAlterLock = 1801, "HY000";
    AlterOperationNotSupported = 1845, "0A000";
    AlterOperationNotSupportedReason = 1846, "0A000";
    SpDoesNotExist = 1305, "42000";
    UserLockWrongName = 3057, "42000";
    ViewWrongList = 1353, "HY000";
    WrongObject = 1347, "HY000";
    ViewRecursive = 1462, "HY000";
    ViewInvalid = 1356, "HY000";
    NonUpdatableTable = 1288, "HY000";
    ViewCheckFailed = 1369, "HY000";
    ViewSelectVariable = 1351, "HY000";
    ViewSelectTmptable = 1352, "HY000";
    NoSuchUser = 1449, "HY000";
    CteRecursiveRequiresUnion = 3573, "HY000";
    CteRecursiveForbidsAggregation = 3575, "HY000";
    CteRecursiveNonrecursiveFirst = 3574, "HY000";
    CteRecursiveSingleReference = 3577, "HY000";
    MaxPreparedStmtCountReached = 1461, "42000";
    ReplicaMustStop = 1198, "HY000";
    BadReplica = 1200, "HY000";
    SourceFatalReadingBinlog = 1236, "HY000";
    ReplicaFatal = 1593, "HY000";
    MalformedGtidSet = 1772, "HY000";
    InvalidJsonText = 3140, "22032";
    InvalidJsonTextInParam = 3141, "22032";
    InvalidJsonPath = 3143, "42000";
    InvalidTypeForJson = 3146, "22032";
    InvalidJsonPathWildcard = 3149, "42000";
    JsonBadOneOrAllArg = 3150, "42000";
    JsonVacuousPath = 3153, "42000";
    JsonDocumentTooDeep = 3157, "22032";
    JsonDocumentNullKey = 3158, "22032";
    InvalidJsonPathArrayCell = 3165, "42000";
    JsonUsedAsKey = 3152, "42000";
    InvalidJsonValueForCast = 3156, "22018";
    MissingJsonTableValue = 3665, "22035";
    WrongJsonTableValue = 3666, "2203F";
    TableFunctionMustHaveAlias = 3667, "42000";
    TableFunctionForbiddenJoin = 3668, "HY000";
    JsonTableValueOutOfRange = 3669, "22003";
    MissingJsonValue = 3966, "22035";
    MultipleJsonValues = 3967, "22034";
    BlobCantHaveDefault = 1101, "42000";
    WarnAllowedPacketOverflowed = 1301, "HY000";
    // Foreign keys.
    CannotAddForeign = 1215, "HY000";
    WrongFkDef = 1239, "42000";
    RowIsReferenced2 = 1451, "23000";
    NoReferencedRow2 = 1452, "23000";
    DropIndexFk = 1553, "HY000";
    TruncateIllegalFk = 1701, "42000";
    FkNoIndexParent = 1822, "HY000";
    FkCannotOpenParent = 1824, "HY000";
    FkDupName = 1826, "HY000";
    FkColumnCannotDrop = 1828, "HY000";
    FkColumnCannotDropChild = 1829, "HY000";
    FkColumnNotNull = 1830, "HY000";
    FkDepthExceeded = 3008, "HY000";
    FkCannotDropParent = 3730, "HY000";
    FkNoColumnParent = 3734, "HY000";
    FkIncompatibleColumns = 3780, "HY000";
    InvalidGroupFuncUse = 1111, "HY000";
    WindowNoSuchWindow = 3579, "HY000";
    WindowCircularity = 3580, "HY000";
    WindowNoChildPartitioning = 3581, "HY000";
    WindowNoInheritFrame = 3582, "HY000";
    WindowNoRedefineOrderBy = 3583, "HY000";
    WindowFrameStartIllegal = 3584, "HY000";
    WindowFrameEndIllegal = 3585, "HY000";
    WindowFrameIllegal = 3586, "HY000";
    WindowRangeFrameOrderType = 3587, "HY000";
    WindowRangeFrameTemporalType = 3588, "HY000";
    WindowRangeFrameNumericType = 3589, "HY000";
    WindowRangeBoundNotConstant = 3590, "HY000";
    WindowDuplicateName = 3591, "HY000";
    WindowIllegalOrderBy = 3592, "HY000";
    WindowInvalidFuncUse = 3593, "HY000";
    WindowInvalidFuncAliasUse = 3594, "HY000";
    WindowNestedFuncInSpec = 3595, "HY000";
    WindowRowsIntervalUse = 3596, "HY000";
    FieldInGroupingNotGroupBy = 3602, "HY000";
    ReplicaChannelIoThreadMustStop = 3021, "HY000";
    ReplicaChannelMustStop = 3081, "HY000";
    // CHECK constraints (MySQL 8.0.16+).
    NonBooleanExprForCheckConstraint = 3812, "HY000";
    ColumnCheckConstraintReferencesOtherColumn = 3813, "HY000";
    CheckConstraintNamedFunctionIsNotAllowed = 3814, "HY000";
    CheckConstraintFunctionIsNotAllowed = 3815, "HY000";
    CheckConstraintVariables = 3816, "HY000";
    CheckConstraintRowValue = 3817, "HY000";
    CheckConstraintRefersAutoIncrementColumn = 3818, "HY000";
    CheckConstraintViolated = 3819, "HY000";
    CheckConstraintRefersUnknownColumn = 3820, "HY000";
    CheckConstraintNotFound = 3821, "HY000";
    CheckConstraintDupName = 3822, "HY000";
    DependentByCheckConstraint = 3959, "HY000";
    ConstraintNotFound = 3940, "HY000";
    // Generated columns.
    GeneratedColumnFunctionIsNotAllowed = 3102, "HY000";
    WrongFkOptionForGeneratedColumn = 3104, "HY000";
    NonDefaultValueForGeneratedColumn = 3105, "HY000";
    UnsupportedActionOnGeneratedColumn = 3106, "HY000";
    GeneratedColumnNonPrior = 3107, "HY000";
    DependentByGeneratedColumn = 3108, "HY000";
    GeneratedColumnRefAutoInc = 3109, "HY000";
    GeneratedColumnNamedFunctionIsNotAllowed = 3763, "HY000";
    GeneratedColumnRowValue = 3764, "HY000";
    GeneratedColumnVariables = 3765, "HY000";
    // Changing rows through views.
    FieldNotUpdatable = 1348, "HY000";
    ViewDeleteMergeView = 1395, "HY000";
    ViewMultiUpdate = 1393, "HY000";
    NonInsertableTable = 1471, "HY000";
}

/// An error a client sees: MySQL code, SQLSTATE (from the code) and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: Code,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    pub fn number(&self) -> u16 {
        self.code.number()
    }

    pub fn sqlstate(&self) -> &'static str {
        self.code.sqlstate()
    }

    /// 1064, with MySQL's "near '...'" wording.
    pub fn parse(near: impl fmt::Display) -> Self {
        Error::new(
            Code::Parse,
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}'"
            ),
        )
    }

    pub fn no_such_table(db: &str, table: &str) -> Self {
        Error::new(
            Code::NoSuchTable,
            format!("Table '{db}.{table}' doesn't exist"),
        )
    }

    pub fn bad_field(column: &str, place: &str) -> Self {
        Error::new(
            Code::BadField,
            format!("Unknown column '{column}' in '{place}'"),
        )
    }

    pub fn dup_entry(key_text: &str, index: &str) -> Self {
        Error::new(
            Code::DupEntry,
            format!("Duplicate entry '{key_text}' for key '{index}'"),
        )
    }

    pub fn deadlock() -> Self {
        Error::new(
            Code::LockDeadlock,
            "Deadlock found when trying to get lock; try restarting transaction",
        )
    }

    pub fn lock_wait_timeout() -> Self {
        Error::new(
            Code::LockWaitTimeout,
            "Lock wait timeout exceeded; try restarting transaction",
        )
    }

    pub fn no_db() -> Self {
        Error::new(Code::NoDb, "No database selected")
    }

    pub fn unsupported(what: impl fmt::Display) -> Self {
        Error::new(
            Code::NotSupportedYet,
            format!("This version of lockstep doesn't yet support '{what}'"),
        )
    }

    /// 1290 for statements that read or write server files (LOAD DATA
    /// INFILE, SELECT ... INTO OUTFILE / DUMPFILE): lockstep touches no
    /// server files for clients, as MySQL with secure_file_priv NULL.
    pub fn secure_file_priv() -> Self {
        Error::new(
            Code::OptionPrevents,
            "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement",
        )
    }

    pub fn internal(what: impl fmt::Display) -> Self {
        Error::new(Code::UnknownError, what.to_string())
    }

    /// Whether the error ends the whole transaction (MySQL rolls it back),
    /// rather than only the failed statement.
    pub fn rolls_back_transaction(&self) -> bool {
        matches!(self.code, Code::LockDeadlock)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.code.number(),
            self.code.sqlstate(),
            self.message
        )
    }
}

impl std::error::Error for Error {}

/// The SQLSTATE of a SIGNAL as a static string: each distinct value is
/// kept once; past a few thousand distinct values, HY000 stands in (a
/// client must not grow the table without bound).
pub fn intern_sqlstate(s: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut g = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if let Some(found) = set.get(s) {
        return found;
    }
    if set.len() >= 4096 || s.len() != 5 {
        return "HY000";
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_states_match_mysql() {
        assert_eq!(Code::Parse.number(), 1064);
        assert_eq!(Code::Parse.sqlstate(), "42000");
        assert_eq!(Code::LockDeadlock.sqlstate(), "40001");
        assert_eq!(Error::no_such_table("d", "t").number(), 1146);
        for s in [Code::DupEntry.sqlstate(), Code::NoSuchTable.sqlstate()] {
            assert_eq!(s.len(), 5);
        }
    }
}
